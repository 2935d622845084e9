"""`bench usage`: the latest provider calls from the ledger (SPEC L-5), newest first; never a prompt."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any
from urllib.parse import urlencode

import typer

from cli.output import rows_table, show
from cli.session import session

COLUMNS = ("t", "call", "alias", "connection", "purpose", "status", "failure", "http_status", "attempts",
           "tokens_in", "tokens_out", "seconds", "paced")


def iso_time(text: str | None) -> str | None:
    """Checked here, so a typo is a usage error (exit 2) rather than a server's refusal."""
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text).isoformat()
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not an ISO 8601 time, e.g. 2026-01-31T08:00:00Z",
                                 param_hint="--since") from None


def usage(
    ctx: typer.Context,
    connection: Annotated[str | None, typer.Option(help="Only this connection (an endpoint name).")] = None,
    alias: Annotated[str | None, typer.Option(help="Only this model alias.")] = None,
    purpose: Annotated[
        str | None, typer.Option(help="Only this purpose: panel, merger, route, probe, shadow, listing.")
    ] = None,
    since: Annotated[str | None, typer.Option(help="Only calls started at or after this ISO time (UTC "
                                                   "when no zone is given).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="How many calls.")] = 100,
) -> None:
    """List the latest provider calls: tokens, status, attempts, pacing (GET /api/usage).

    Example:

    \b
      bench usage --connection groq --since 2026-01-31T00:00 --limit 20
    """
    query: dict[str, Any] = {"connection": connection, "alias": alias, "purpose": purpose,
                             "since": iso_time(since), "limit": limit}
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/usage?" + urlencode({k: v for k, v in query.items() if v is not None}))
    s.emit(reply, lambda data: show(rows_table("usage", COLUMNS, data.get("rows") or [])))

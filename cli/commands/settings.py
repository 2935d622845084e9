"""`bench settings …`: the gateway's settings (SPEC C-11)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import record_table, show
from cli.session import session

app = noun_app("Settings of the gateway.")


@app.command("gateway")
def gateway(
    ctx: typer.Context,
    max_calls: Annotated[int | None, typer.Option(help="Seats per panel, 1..10.")] = None,
    max_explorers: Annotated[int | None, typer.Option(help="Explorer seats, 0..2.")] = None,
) -> None:
    """Show, or change, how many seats a panel has (POST /api/gateway-settings).

    Example:

    \b
      bench settings gateway --max-calls 6 --max-explorers 2
    """
    body: dict[str, Any] = {}
    if max_calls is not None:
        body["max_calls"] = max_calls
    if max_explorers is not None:
        body["max_explorers"] = max_explorers
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/gateway-settings", body) if body else client.get("/api/collections")
    s.emit(reply, lambda data: show(record_table("gateway settings", data.get("settings") or {})))

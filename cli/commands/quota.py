"""`bench quota`: the ledger's quota view (SPEC L-7): live quota records, what the bench sent per
connection, models resting after a rate limit, and the limits known (yours and learned)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import typer

from cli.output import rows_table, say, show
from cli.session import session

AXES = ("rpm", "rpd", "tpm", "tpd", "rpmo")


def table(title: str, columns: Iterable[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """A table, or one line saying there is nothing (an empty grid tells nobody anything)."""
    if rows:
        show(rows_table(title, columns, rows))
    else:
        say(f"{title}: none")


def sent_rows(sent: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per connection: requests and tokens over the last 24 h and this UTC month."""
    return [
        {"connection": line.get("connection"),
         **{f"{window} {what}": (line.get(window) or {}).get(what)
            for window in ("24h", "month") for what in ("requests", "tokens")}}
        for line in ({**s, "24h": s.get("day")} for s in sent)
    ]


def human(data: Mapping[str, Any]) -> None:
    say(f"as of {data.get('at')}")
    table("quota records", ("connection", "alias", "metric", "window", "left", "of", "resets", "source",
                            "age_s"), data.get("quotas") or [])
    table("sent", ("connection", "24h requests", "24h tokens", "month requests", "month tokens"),
          sent_rows(data.get("sent") or []))
    table("resting", ("alias", "connection", "until", "minutes_left", "wait"), data.get("resting") or [])
    limits = data.get("limits") or {}
    table("your limits", ("scope", "name", *AXES, "at", "by"), limits.get("user") or [])
    table("learned limits", ("alias", "connection", "axis", "limit", "date", "where", "enforced"),
          limits.get("learned") or [])


def quota(ctx: typer.Context) -> None:
    """Show quotas and limits: live quota records, requests and tokens sent per connection (24 h, this
    month), models resting after a rate limit, your limits and learned ones (GET /api/quota).

    Example:

    \b
      bench quota
      bench quota --json | jq '.sent'
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/quota")
    s.emit(reply, human)

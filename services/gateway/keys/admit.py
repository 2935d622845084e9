"""P-1 steps 6 and 7 for a generation: the caller's key scope (403) and its rpm cap (429), counted once per
request after the collection is known. Also what a scoped key may see in the model listings."""

from __future__ import annotations

from typing import Any

from starlette.requests import HTTPConnection

from services.gateway.panel.resolve import Resolved, split_model
from shared.access import Caller, caller_of
from shared.key_book import key_book
from shared.refusal import Refusal

RETRY_AFTER = "retry_after"


def scope_refusal(caller: Caller, collection: str) -> Refusal | None:
    if caller.collections is None or collection in caller.collections:
        return None
    allowed = ", ".join(f"bench/{c}" for c in caller.collections) or "none"
    return Refusal(403, f"the gateway key {caller.name} may not call bench/{collection}; it may call "
                        f"{allowed}")


async def admit(conn: HTTPConnection, resolved: Resolved) -> None:
    caller = caller_of(conn)
    refusal = scope_refusal(caller, resolved.name)
    if refusal is not None:
        raise refusal
    if not caller.rpm:
        return
    book = await key_book(conn.app.state, conn.app.state.ctx.js)
    wait = await book.take(caller)
    if wait is not None:
        conn.scope.setdefault("state", {})[RETRY_AFTER] = wait
        raise Refusal(429, f"the gateway key {caller.name} may make {caller.rpm} requests a minute; try "
                           f"again in {wait}s")


def visible(rows: list[dict[str, Any]], conn: HTTPConnection) -> list[dict[str, Any]]:
    """H-G1: a scoped key sees only its collections' rows."""
    caller = caller_of(conn)
    if caller.collections is None:
        return rows
    return [row for row in rows if split_model(str(row.get("id", "")))[0] in caller.collections]

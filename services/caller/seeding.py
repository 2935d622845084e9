"""Windows seeded from the ledger's history (SPEC L-2: requests counted = the ledger's attempts + calls in
flight). Pure: the document, the limits, the ledger's reply and the time are inputs.

A caller writes windows only while some limit binds, so a limit set after the bench has been sending
would start from empty windows. The document therefore remembers which scopes hold their full history:
`*` (every alias of the connection, needed by a connection limit) or an alias (needed by that model's
limits). A call bound by a limit whose scope is not seeded merges the ledger's history in once; a scope
whose limits no longer bind loses its mark, since nothing records its calls from then on, and a later
limit seeds it again.
"""

from __future__ import annotations

from services.caller.pacing import DAY_S, Entry, Limit, Windows, month_key
from shared.commands import PacingReply

CONNECTION = "*"


def bound_scopes(limits: list[Limit]) -> set[str]:
    return {lim.scope for lim in limits}


def to_seed(doc: Windows, limits: list[Limit], alias: str) -> str | None:
    """The scope this call's limits need history for and the windows lack, else None."""
    bound = bound_scopes(limits)
    if CONNECTION in doc.seeded:
        return None
    if "connection" in bound:
        return CONNECTION
    if "model" in bound and alias not in doc.seeded:
        return alias
    return None


def merge(doc: Windows, history: PacingReply, scope: str, now: float) -> None:
    """Count the ledger's history of `scope` in the windows, and mark it seeded.

    What the windows already hold of that scope in minute buckets is the ledger's record too, so it gives
    way; calls in flight (the ledger has not heard of them) and exact entries stay, and the ledger's row of
    a call the windows still hold by its id is skipped. A connection seed also sets this month's count.
    """

    def covered(alias: str) -> bool:
        return scope == CONNECTION or alias == scope

    kept = [e for e in doc.entries if not covered(e.alias) or e.until or e.call]
    held = {e.call for e in kept if e.call}
    added = [
        Entry(t, alias, attempts, tokens, call=call)
        for t, alias, attempts, tokens, call in history.rows
        if covered(alias) and t > now - DAY_S and not (call and call in held)
    ]
    doc.entries = kept + added
    month = month_key(now)
    if scope == CONNECTION and history.month == month:
        known = {call for *_, call in history.rows if call}
        unheard = sum(e.requests for e in kept if e.call not in known and month_key(e.t) == month)
        doc.months[month] = history.month_requests + unheard
    doc.seeded.add(scope)


def refresh(doc: Windows, limits: list[Limit], alias: str, history: PacingReply | None, now: float) -> bool:
    """Seed what this call needs (when the ledger answered) and keep each mark only while its scope is
    bound. True when the document changed."""
    before = set(doc.seeded)
    scope = to_seed(doc, limits, alias)
    merged = False
    if scope is not None and history is not None:
        merge(doc, history, scope, now)
        merged = True
    bound = bound_scopes(limits)
    if "connection" not in bound:
        doc.seeded.discard(CONNECTION)
    if "model" not in bound:
        doc.seeded.discard(alias)
    elif CONNECTION in doc.seeded:  # every call of the alias is counted already: keep it so
        doc.seeded.add(alias)
    return merged or doc.seeded != before

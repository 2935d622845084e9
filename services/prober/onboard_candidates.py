"""O-4: candidates to onboard, and dismissing them. Pure.

A candidate is a served id an endpoint lists that is not on the bench, not retired from it and not a
decision model's; its key is `served` on the default endpoint, `served@endpoint` elsewhere. `new` means
the endpoint's previous listing (kept in the queue document when candidates were last asked) did not have
it; an endpoint never listed before marks nothing new.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from services.prober.onboard_rules import QueueDoc
from shared.config_state import ConfigState
from shared.onboarding import Candidate

MAX_DISMISSED = 5000


def candidate_key(served: str, endpoint: str, default: str | None) -> str:
    return served if endpoint == default else f"{served}@{endpoint}"


def taken(state: ConfigState) -> set[tuple[str, str]]:
    on_bench = {(m.served, m.endpoint) for m in state.models.values()}
    return on_bench | {(r.model.served, r.model.endpoint) for r in state.retired.values()}


def candidates(state: ConfigState, doc: QueueDoc, listings: Mapping[str, Sequence[str]]
               ) -> tuple[list[Candidate], list[Candidate]]:
    """(candidates, dismissed), each sorted by endpoint then served id."""
    default, skip = state.default_endpoint(), taken(state)
    shown: list[Candidate] = []
    dismissed: list[Candidate] = []
    for endpoint in sorted(listings):
        before = doc.seen.get(endpoint)
        for served in sorted(set(listings[endpoint])):
            if (served, endpoint) in skip:
                continue
            key = candidate_key(served, endpoint, default)
            found = Candidate(served=served, endpoint=endpoint, key=key,
                              new=before is not None and served not in before)
            (dismissed if key in doc.dismissed else shown).append(found)
    return shown, dismissed


def seen(doc: QueueDoc, listings: Mapping[str, Sequence[str]]) -> QueueDoc:
    """The listings remembered for the next `new`."""
    return doc.model_copy(update={"seen": {**doc.seen, **{e: sorted(set(s)) for e, s in listings.items()}}})


def dismiss(doc: QueueDoc, keys: Sequence[str], undo: bool) -> QueueDoc:
    """Hide (or show again) candidate keys; the oldest dismissals go past `MAX_DISMISSED`."""
    now = [k for k in doc.dismissed if not (undo and k in keys)]
    if not undo:
        now += [k for k in dict.fromkeys(keys) if k not in now]
    return doc.model_copy(update={"dismissed": now[-MAX_DISMISSED:]})

"""The onboarding queue's rules (O-3, O-4): what may be queued, who runs the next item, and each item's
moves. Pure: every function takes the queue document and returns the next one, so the store writes it with
compare-and-set and two probers (or two gateways asking) can never both win on a stale queue.

One document (`QueueDoc`) holds the whole queue, so "refused as a whole", "not already queued" and "one
model at a time across every replica" are each one compare-and-set. The item being run names its runner
and a lease (`until`); a runner that dies stops renewing, and once the lease lapses any prober takes the
item over and runs its steps again (every step is safe to repeat).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from shared.config_state import ConfigState
from shared.onboarding import FINISHED, MAX_BATCH, Mode, OnboardAsk, OnboardIssue, OnboardItem, State

SERVED_RE = re.compile(r"^[\w./:@+-]{1,200}$")
MODES: tuple[Mode, ...] = ("full", "quick", "quick-adhoc")
# A prober that died this many times while running one item (each a lapsed lease) fails it, visibly.
MAX_ATTEMPTS = 3
MAX_ISSUES = 200
NEAR_MATCHES = 3


class QueueDoc(BaseModel):
    """The `queue` entry of the `bench_onboard` bucket."""

    items: list[OnboardItem] = Field(default_factory=list)
    stopping: bool = False
    runner: str = ""  # the prober instance running the item in state `running`
    until: datetime | None = None  # its lease
    issues: list[OnboardIssue] = Field(default_factory=list)
    dismissed: list[str] = Field(default_factory=list)  # O-4 candidate keys
    seen: dict[str, list[str]] = Field(default_factory=dict)  # endpoint → served ids at the last listing


class Missing(str):
    """A reason that is only "the thing named does not exist" (an endpoint, a served id on it)."""


class Conflict(str):
    """A reason that is only "not in that state now" (already queued, registered or retired)."""


class Refused(ValueError):
    """Every reason at once; the status is 404 when each says something does not exist, 409 when each says
    that or a state in the way, else 400 (as the admin API's own rules do)."""

    def __init__(self, errors: Sequence[str], status: int | None = None) -> None:
        super().__init__("; ".join(errors))
        self.errors = list(errors)
        if status is None:
            status = (404 if all(isinstance(e, Missing) for e in errors)
                      else 409 if all(isinstance(e, Missing | Conflict) for e in errors) else 400)
        self.status = status


def active(doc: QueueDoc) -> list[OnboardItem]:
    return [i for i in doc.items if i.state in ("queued", "running")]


def near(served: str, listed: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(served, listed, n=NEAR_MATCHES, cutoff=0.5)


def not_listed(served: str, endpoint: str, listed: Sequence[str]) -> Missing:
    close = near(served, listed)
    hint = f"; near matches: {', '.join(close)}" if close else ""
    return Missing(f"{endpoint} does not list {served!r}{hint}")


def refusals(asks: Sequence[OnboardAsk], state: ConfigState, doc: QueueDoc,
             listings: Mapping[str, Sequence[str] | str]) -> list[str]:
    """O-3: every reason the batch is refused (it is refused as a whole). `listings` holds each endpoint's
    served ids, or why its listing failed."""
    if not 1 <= len(asks) <= MAX_BATCH:
        return [f"send 1 to {MAX_BATCH} items (got {len(asks)})"]
    errors: list[str] = []
    waiting = {(i.served, i.endpoint) for i in active(doc)}
    picked: set[tuple[str, str]] = set()
    for ask in asks:
        where = f"{ask.served!r} on {ask.endpoint!r}"
        if not SERVED_RE.match(ask.served):
            errors.append(f"{ask.served!r} is not a served id (1-200 of letters, digits and ./:@+-_)")
            continue
        if ask.mode not in MODES:
            errors.append(f"{where}: mode must be one of {', '.join(MODES)}")
        if ask.endpoint not in state.endpoints:
            known = ", ".join(sorted(state.endpoints)) or "none yet"
            errors.append(Missing(f"{where}: no endpoint {ask.endpoint!r} (endpoints: {known})"))
            continue
        place = (ask.served, ask.endpoint)
        on_bench = next((a for a, m in state.models.items() if (m.served, m.endpoint) == place), None)
        retired = next((a for a, r in state.retired.items() if (r.model.served, r.model.endpoint) == place),
                       None)
        listing = listings.get(ask.endpoint, ())
        if place in picked:
            errors.append(f"{where} is picked twice")
        elif place in waiting:
            errors.append(Conflict(f"{where} is already queued"))
        elif on_bench:
            errors.append(Conflict(f"{where} is already registered as {on_bench!r}"))
        elif retired:
            errors.append(Conflict(f"{where} was retired as {retired!r}; restore it instead"))
        elif isinstance(listing, str):
            errors.append(f"{where}: {ask.endpoint}'s model list failed: {listing}")
        elif ask.served not in listing:
            errors.append(not_listed(ask.served, ask.endpoint, listing))
        picked.add(place)
    return errors


def enqueue(doc: QueueDoc, asks: Sequence[OnboardAsk], ids: Sequence[str], now: datetime) -> QueueDoc:
    """Items join a batch under way; a new batch replaces a finished one's results."""
    kept = doc.items if active(doc) else []
    new = [OnboardItem(id=i, served=a.served, endpoint=a.endpoint, mode=a.mode,
                       queued_at=now) for i, a in zip(ids, asks, strict=True)]
    return doc.model_copy(update={"items": [*kept, *new], "stopping": False if not kept else doc.stopping})


def stop(doc: QueueDoc, now: datetime) -> QueueDoc:
    """Stop skips the queued items now; the running one finishes its steps."""
    items = [i.model_copy(update={"state": "skipped", "ended_at": now, "note": "stopped before its turn"})
             if i.state == "queued" else i for i in doc.items]
    running = any(i.state == "running" for i in items)
    return doc.model_copy(update={"items": items, "stopping": running})


def clear(doc: QueueDoc) -> QueueDoc:
    """Forget a finished batch; refused while an item is queued or running."""
    if active(doc):
        raise Refused([Conflict("the queue is running; stop it and wait for the current model, then clear")])
    return doc.model_copy(update={"items": [], "stopping": False})


def lease_live(doc: QueueDoc, now: datetime) -> bool:
    return bool(doc.runner) and doc.until is not None and doc.until > now


@dataclass
class Turn:
    """A prober's claim on the next item: the document to write, the item it runs, and the items it gave
    up on (their runners died too often)."""

    doc: QueueDoc
    item: OnboardItem | None
    gave_up: list[OnboardItem] = field(default_factory=list)


def take_turn(doc: QueueDoc, me: str, now: datetime, lease_s: float) -> Turn | None:
    """None while another prober's lease is live (or nothing is left); else this prober's claim: the item
    left `running` by a runner whose lease lapsed (taken over), else the first queued one."""
    if lease_live(doc, now) and doc.runner != me:
        return None
    items, gave_up = list(doc.items), []
    chosen: int | None = None
    for n, item in enumerate(items):
        if item.state == "running" and item.attempts >= MAX_ATTEMPTS:
            why = f"its prober stopped {item.attempts} times during step {item.step}; see the probers' logs"
            items[n] = item.model_copy(update={"state": "failed", "note": why, "ended_at": now})
            gave_up.append(items[n])
        elif item.state == "running" or (item.state == "queued" and chosen is None):
            chosen = n if chosen is None or items[chosen].state == "queued" else chosen
    if chosen is None:
        if not gave_up and not doc.runner:
            return None
        rest = doc.model_copy(update={"items": items, "runner": "", "until": None, "stopping": False})
        return Turn(rest, None, gave_up)
    item = items[chosen]
    items[chosen] = item.model_copy(update={"state": "running", "attempts": item.attempts + 1})
    mine = doc.model_copy(update={"items": items, "runner": me, "until": now + timedelta(seconds=lease_s)})
    return Turn(mine, items[chosen], gave_up)


class Lost(RuntimeError):
    """This prober no longer holds the queue (its lease lapsed and another took the item over)."""


def holding(doc: QueueDoc, me: str, item: str) -> OnboardItem:
    found = next((i for i in doc.items if i.id == item), None)
    if doc.runner != me or found is None or found.state != "running":
        raise Lost(f"{me} no longer runs {item}")
    return found


def renewed(doc: QueueDoc, me: str, item: str, now: datetime, lease_s: float) -> QueueDoc:
    holding(doc, me, item)
    return doc.model_copy(update={"until": now + timedelta(seconds=lease_s)})


def at_step(doc: QueueDoc, me: str, item: str, step: int, alias: str, now: datetime,
            lease_s: float) -> QueueDoc:
    found = holding(doc, me, item)
    moved = found.model_copy(update={"step": step, "alias": alias or found.alias})
    items = [moved if i.id == item else i for i in doc.items]
    return doc.model_copy(update={"items": items, "until": now + timedelta(seconds=lease_s)})


def released(doc: QueueDoc, me: str, item: str) -> QueueDoc:
    """A prober stopping on purpose (SIGTERM) gives its item back, queued first again and not counted as
    a death, so another replica takes it at its next tick instead of waiting for the lease to lapse."""
    found = holding(doc, me, item)
    back = found.model_copy(update={"state": "queued", "attempts": max(0, found.attempts - 1)})
    items = [back if i.id == item else i for i in doc.items]
    return doc.model_copy(update={"items": items, "runner": "", "until": None})


@dataclass(frozen=True)
class Outcome:
    state: State
    note: str = ""
    alias: str = ""
    issue: OnboardIssue | None = None


def finished(doc: QueueDoc, me: str, item: str, outcome: Outcome, now: datetime) -> QueueDoc:
    """The item's end: its state and note, the issue if it stopped short, and the lease given back."""
    assert outcome.state in FINISHED
    found = holding(doc, me, item)
    ended = found.model_copy(update={"state": outcome.state, "note": outcome.note, "ended_at": now,
                                     "alias": outcome.alias or found.alias})
    items = [ended if i.id == item else i for i in doc.items]
    issues = [*doc.issues, outcome.issue][-MAX_ISSUES:] if outcome.issue else doc.issues
    stopping = doc.stopping and any(i.state == "queued" for i in items)
    return doc.model_copy(update={"items": items, "issues": issues, "runner": "", "until": None,
                                  "stopping": stopping})


def remaining(doc: QueueDoc) -> int:
    return len(active(doc))

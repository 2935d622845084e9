"""The offload rules (C-13, H-G10..H-G12, RM-9): verdicts, pending seats and a collection's record. Pure.

A seat is an offload the moment it completes (unjudged); a verdict supersedes the call's previous one.
Panel seats, mergers and route conversations (`<conv>.<n>`, one per model that answered) are offloads;
probe and shadow seats are evaluation calls, never offloads. The store hands these functions the facts;
they decide what to write and what to answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from shared.commands import VerdictRequest
from shared.events import VerdictRecorded
from shared.ids import digest, event_id

OK_STATUSES = frozenset({"ok", "empty"})
# The seat purposes that make an offload; the store reads only these as offloads.
OFFLOAD_PURPOSES = ("panel", "merger", "route")


@dataclass(frozen=True)
class SeatFacts:
    """What the ledger knows of one call, enough to judge it."""

    call: str
    alias: str
    seat: str  # label: member, explorer, explorer 2, merger (`route` for a route conversation)
    task: str
    status: str
    seconds: float
    error: str
    purpose: str = "panel"
    shape: str = ""  # the panel's (P-4); "" for a route conversation


@dataclass(frozen=True)
class StoredVerdict:
    """A call's latest verdict and the stream sequence it was stored at."""

    seq: int
    at: datetime
    useful: bool
    note: str
    real: tuple[str, ...]
    false: tuple[str, ...]


@dataclass(frozen=True)
class Judged:
    """A judged call as the record counts it: its seat's alias and task, its latest verdict."""

    alias: str
    task: str
    useful: bool
    note: str
    at: datetime


@dataclass(frozen=True)
class NotFound:
    status: int
    message: str


@dataclass(frozen=True)
class Unchanged:
    """The verdict asked for is the one stored: nothing is written (A-10)."""

    entry: dict[str, Any]


@dataclass(frozen=True)
class Record:
    """A verdict to publish, and the offload entry to answer once it is folded."""

    event: VerdictRecorded
    entry: dict[str, Any]


Decision = NotFound | Unchanged | Record


def unknown_call(call: str) -> str:
    return (
        f"no offload with call id '{call}'; it is not a seat of a panel or route conversation this bench ran"
    )


def seat_note(seat: SeatFacts) -> str:
    """C-13: a seat's unjudged note, `<seat label>; <status> in <s>s` (+ `: <error ≤120>`); RM-9: a route
    conversation's, `route conversation; first turn <status> in <s>s`."""
    if seat.purpose == "route":
        return f"route conversation; first turn {seat.status} in {round(seat.seconds, 1)}s"
    note = f"{seat.seat}; {seat.status} in {round(seat.seconds, 1)}s"
    return note + (f": {seat.error[:120]}" if seat.error else "")


def offload_entry(
    seat: SeatFacts, at: datetime, useful: bool, note: str, real: Iterable[str], false: Iterable[str]
) -> dict[str, Any]:
    """The offload line a verdict leaves (C-13), as `POST /bench/verdict` answers it."""
    return {
        "date": at.astimezone(UTC).date().isoformat(),
        "model": seat.alias,
        "task": seat.task,
        "useful": useful,
        "note": note,
        "call": seat.call,
        "real": list(real),
        "false": list(false),
    }


def decide_verdict(
    req: VerdictRequest, seat: SeatFacts | None, stored: StoredVerdict | None, now: datetime
) -> Decision:
    """H-G10: unknown call → 404; blank note / empty claims keep the previous value; the same verdict twice
    writes nothing; otherwise a `VerdictRecorded` whose id names the content and the verdict it follows,
    so a retried request is stored once and two different verdicts never share an id."""
    if seat is None:
        return NotFound(404, unknown_call(req.call))
    previous_note = stored.note if stored else seat_note(seat)
    note = req.note if req.note is not None and req.note.strip() else previous_note
    real = tuple(req.real) if req.real else (stored.real if stored else ())
    false = tuple(req.false_claims) if req.false_claims else (stored.false if stored else ())
    if stored and (stored.useful, stored.note, stored.real, stored.false) == (req.useful, note, real, false):
        entry = offload_entry(seat, stored.at, stored.useful, stored.note, stored.real, stored.false)
        return Unchanged(entry)
    content = json.dumps([req.useful, note, list(real), list(false)], separators=(",", ":"))
    event = VerdictRecorded(
        id=event_id("verdict", req.call, digest(content), str(stored.seq if stored else 0)),
        at=now, by=req.by, call=req.call, alias=seat.alias, useful=req.useful, shape=seat.shape, note=note,
        real=list(real), false_claims=list(false),
    )
    return Record(event, offload_entry(seat, now, req.useful, note, real, false))


def pending(calls: Iterable[str], known: Mapping[str, tuple[str, bool]]) -> list[str]:
    """H-G11: of `calls`, in order, the known seats with no verdict that did not error.

    `known` maps a call to (status, judged) for the calls the ledger holds.
    """
    out = []
    for call in calls:
        facts = known.get(call)
        if facts is not None and facts[0] in OK_STATUSES and not facts[1]:
            out.append(call)
    return out


def tally(judged: Iterable[Judged], collection: str, task: str = "") -> dict[str, dict[str, Any]]:
    """H-G12: per alias, useful / not useful / judged counts and the last verdict's date, counting only
    judged calls whose task names `(<collection>,` and, with `task`, whose verdict note holds it."""
    out: dict[str, dict[str, Any]] = {}
    marker = f"({collection},"
    for j in judged:
        if marker not in j.task or (task and task not in j.note):
            continue
        r = out.setdefault(j.alias, {"useful": 0, "notUseful": 0, "judged": 0, "lastAt": ""})
        r["useful" if j.useful else "notUseful"] += 1
        r["judged"] += 1
        r["lastAt"] = max(r["lastAt"], j.at.astimezone(UTC).date().isoformat())
    return out

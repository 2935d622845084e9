"""Merged mode (P-15): who merges, what the merger reads, and what the reply says either way. Pure.

The merger is a seat of its own (`<panel>.merger`, label `merger`) asked after the panel, text only: it
reads the request and the answers with images as placeholders, never an image. Whatever becomes of the
merge, the panel's answers stand: a merge that cannot be made, or comes back without an answer, leaves a
note and every answer in the reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.gateway.ask import Ask
from services.gateway.panel.flatten import estimate_tokens
from services.gateway.panel.text import ERROR_SHOWN_CHARS, full_text, seat_object
from shared.commands import MergerCandidate, Plan
from shared.events import SeatCompleted, SeatPlan

INSTRUCTION = (
    "Several models answered the same request; their answers follow it. Write ONE answer to the request "
    "from them. Say where they agreed and where they disagreed, and who said what, naming each model. "
    "Keep every dissent, even a lone one. Do not treat a claim as settled because several models made it: "
    "agreement is not evidence."
)
NO_SEAT_ANSWERED = "no seat answered"
POINTER = (
    "Each seat's own answer is in `bench.seats`; judge each seat and the merger with `POST /bench/verdict` "
    "(see `bench.verdict`)."
)


@dataclass(frozen=True)
class Merge:
    """What became of a merge: the merger's seat and completion once it was called, and the note that
    explains a fallback to every answer ("" when the merge went through)."""

    seat: SeatPlan | None = None
    done: SeatCompleted | None = None
    note: str = ""

    @property
    def merged(self) -> bool:
        return not self.note and self.done is not None


def request_text(ask: Ask) -> str:
    return f"{ask.system}\n\n{ask.prompt}" if ask.system else ask.prompt


def merger_input(ask: Ask, plan: Plan, results: Mapping[str, SeatCompleted]) -> str:
    """The merger's user text: the request (images as placeholders), then each ok seat's answer."""
    answers = [
        f"## {seat.seat} — {seat.alias}\n\n{results[seat.call].answer}"
        for seat in plan.seats
        if seat.call in results and results[seat.call].status == "ok"
    ]
    return f"THE REQUEST\n\n{request_text(ask)}\n\nTHE ANSWERS\n\n" + "\n\n".join(answers)


def fits(candidate: MergerCandidate, need: int) -> bool:
    """A window nobody knows never stands in the way (as in P-5); a known one must hold the merge."""
    return candidate.context_window is None or candidate.context_window >= need


def merger_seat(plan: Plan, candidate: MergerCandidate) -> SeatPlan:
    return SeatPlan(
        call=f"{plan.panel}.merger", seat="merger", alias=candidate.alias, served=candidate.served,
        endpoint=candidate.endpoint, connection=candidate.connection,
    )


def choose_merger(ask: Ask, plan: Plan, results: Mapping[str, SeatCompleted]) -> tuple[SeatPlan, str] | Merge:
    """The merger's seat and input text, or the Merge that explains why no merge call is made."""
    if not any(done.status == "ok" for done in results.values()):
        return Merge(note=NO_SEAT_ANSWERED)
    text = merger_input(ask, plan, results)
    need = estimate_tokens(INSTRUCTION, text)
    chosen = next((c for c in plan.mergers if fits(c, need)), None)
    if chosen is None:
        return Merge(note=f"no merger has the context window for the merge (about {need:,} tokens)")
    return merger_seat(plan, chosen), text


def merged(seat: SeatPlan, done: SeatCompleted) -> Merge:
    """The merger's completion: an answer merges; anything else is a fallback naming what came back."""
    if done.status == "ok":
        return Merge(seat=seat, done=done)
    note = f"the merger {seat.alias} came back {done.status}"
    if done.error:
        note += f": {done.error[:ERROR_SHOWN_CHARS]}"
    return Merge(seat=seat, done=done, note=note)


def merged_text(plan: Plan, results: Mapping[str, SeatCompleted], merge: Merge) -> str:
    """The reply's content: the merger's answer with a signed rule, or the fallback before every answer."""
    if merge.merged and merge.seat is not None and merge.done is not None:
        sources = ", ".join(f"{s.alias} {results[s.call].status}" for s in plan.seats if s.call in results)
        signature = f"Merged by {merge.seat.alias} (`{merge.seat.call}`) from: {sources}. {POINTER}"
        return f"{merge.done.answer}\n\n---\n{signature}"
    return f"_Merged reply unavailable: {merge.note}. Every answer follows._\n\n{full_text(plan, results)}"


def merge_fields(merge: Merge) -> dict[str, Any]:
    """P-14's merged-mode fields: `reply`, `merger` once one was called, `note` after a fallback."""
    fields: dict[str, Any] = {"reply": "merged" if merge.merged else "all"}
    if merge.seat is not None and merge.done is not None:
        fields["merger"] = seat_object(merge.seat, merge.done)
    if merge.note:
        fields["note"] = merge.note
    return fields

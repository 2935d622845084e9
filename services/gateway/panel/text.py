"""What a panel says back in `all` mode: the Markdown reply (P-13), the `bench` object (P-14), and the
task text each seat is recorded under (C-13). Pure.

The streamed reply is the same text cut into pieces: `head` first, then `"\\n" + section` as each seat
lands, then `"\\n" + FOOTER`; `full_text` joins the same pieces with the sections in seat order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.commands import Plan
from shared.events import SeatCompleted, SeatPlan, Skip

VERDICT_HINT = 'POST /bench/verdict {"call", "useful": true|false, "note", "real": [...], "false": [...]}'
FOOTER = (
    "---\n"
    "Check each answer against the real work, then record a verdict per seat by its call id: was it useful, "
    "and which of its claims were real or false?\n"
    "Send it with `POST /bench/verdict` (see `bench.verdict`) "
    "or `bench verdict <call id> --useful|--not-useful`."
)
EMPTY_BODY = "_empty reply — usually a token budget, not incapacity_"
TASK_PROMPT_CHARS = 90
ERROR_SHOWN_CHARS = 300


def canonical_name(collection: str) -> str:
    return f"bench/{collection}"


def seat_task(prompt: str, collection: str, shape: str) -> str:
    """C-13: the prompt's first 90 characters, whitespace collapsed, + ` (bench/<c>, <shape>)`."""
    words = " ".join(prompt.split())[:TASK_PROMPT_CHARS]
    return f"{words} ({canonical_name(collection)}, {shape})"


def heading(plan: Plan) -> str:
    return (
        f"Bench {canonical_name(plan.collection)} {plan.panel} · {plan.members} members + {plan.explorers} "
        f"explorers · explorer shape {plan.shape} ({plan.shape_by})"
    )


def not_asked(skipped: list[Skip]) -> str:
    return "Not asked: " + "; ".join(f"{s.alias} ({s.why})" for s in skipped)


def head(plan: Plan) -> str:
    """The first piece: the heading and, when anyone was skipped, the Not-asked line."""
    parts = [heading(plan) + "\n"]
    if plan.skipped:
        parts.append(not_asked(plan.skipped) + "\n")
    return "\n".join(parts)


def seconds_text(seconds: float) -> str:
    return f"{seconds:.1f}"


def section(seat: SeatPlan, done: SeatCompleted) -> str:
    if done.answer:
        body = done.answer
    elif done.error:
        body = f"_error: {done.error[:ERROR_SHOWN_CHARS]}_"
    else:
        body = EMPTY_BODY
    status = f"`{seat.call}` · {done.status} · {seconds_text(done.seconds)}s"
    return f"## {seat.seat} — {seat.alias}\n{status}\n\n{body}\n"


def full_text(plan: Plan, results: Mapping[str, SeatCompleted]) -> str:
    """P-13: heading, Not-asked, one section per seat in SEAT order, footer, joined by newlines."""
    sections = [section(seat, results[seat.call]) for seat in plan.seats if seat.call in results]
    return "\n".join([head(plan), *sections, FOOTER])


def seat_object(seat: SeatPlan, done: SeatCompleted) -> dict[str, Any]:
    return {
        "call": seat.call, "seat": seat.seat, "alias": seat.alias, "status": done.status,
        "seconds": round(done.seconds, 1), "answer": done.answer, "error": done.error,
    }


def bench_object(plan: Plan, results: Mapping[str, SeatCompleted]) -> dict[str, Any]:
    """P-14: beside the format's own fields; never the prompt or the system text."""
    bench: dict[str, Any] = {
        "panel": plan.panel,
        "collection": canonical_name(plan.collection),
        "shape": plan.shape,
        "shape_by": plan.shape_by,
        "seats": [seat_object(seat, results[seat.call]) for seat in plan.seats if seat.call in results],
        "verdict": VERDICT_HINT,
    }
    if plan.skipped:
        bench["skipped"] = [s.model_dump() for s in plan.skipped]
    return bench

"""The bus messages a panel sends and the ones the gateway writes itself. Pure.

Each seat becomes one `SeatCall` on the callers' work queue. A round of seats shares one `Question`: panel
seats get the flattened system and prompt (P-10), or with images the request's messages as sent (P-6); the
merger gets its instruction and the answers, text only (P-15). When no caller answers by the deadline, the
gateway writes the seat's `SeatCompleted` itself; its id is the one a caller would use, so whichever
reaches the stream first is the seat's answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from services.gateway.ask import Ask
from services.gateway.panel.merge import INSTRUCTION, Merge
from services.gateway.panel.text import seat_task
from shared.commands import MESSAGES, Msg, Plan, SeatCall
from shared.events import EndpointSaved, PanelAnswered, SeatCompleted, SeatPlan


@dataclass(frozen=True)
class Question:
    """What every seat of one round is asked, why, and the task its answer is recorded under (C-13)."""

    messages: list[Msg]
    purpose: Literal["panel", "merger"]
    task: str


def seat_messages(ask: Ask) -> list[Msg]:
    if ask.images:
        return MESSAGES.validate_python(ask.messages)
    messages = [Msg(role="system", content=ask.system)] if ask.system else []
    return [*messages, Msg(role="user", content=ask.prompt)]


def panel_question(ask: Ask, plan: Plan) -> Question:
    return Question(seat_messages(ask), "panel", seat_task(ask.prompt, plan.collection, plan.shape))


def merger_question(ask: Ask, plan: Plan, text: str) -> Question:
    messages = [Msg(role="system", content=INSTRUCTION), Msg(role="user", content=text)]
    return Question(messages, "merger", seat_task(ask.prompt, plan.collection, plan.shape))


def seat_call(
    plan: Plan, seat: SeatPlan, question: Question, endpoint: EndpointSaved, deadline: float,
    timeout_s: float, options: dict[str, Any] | None = None, config_seq: int = 0,
) -> SeatCall:
    """P-10: each seat keeps its own call options (the request's sampling options are not passed on).
    `config_seq` is the gateway's config position: the caller decides the call on a config at least as new."""
    return SeatCall(
        call=seat.call, panel=plan.panel, seat=seat.seat, alias=seat.alias, served=seat.served,
        endpoint=endpoint.name, base=endpoint.base, api=endpoint.api, headers=dict(endpoint.headers),
        connection=seat.connection, collection=plan.collection, task=question.task, purpose=question.purpose,
        messages=question.messages, deadline=deadline, timeout_s=timeout_s, options=dict(options or {}),
        config_seq=config_seq,
    )


def seat_failed(
    plan: Plan, seat: SeatPlan, question: Question, error: str, seconds: float, by: str
) -> SeatCompleted:
    """A seat no caller answered (deadline) or that could not be queued: an error, recorded like any seat."""
    return SeatCompleted(
        id=f"seat:{seat.call}", by=by, call=seat.call, panel=plan.panel, seat=seat.seat, alias=seat.alias,
        served=seat.served, endpoint=seat.endpoint, connection=seat.connection, collection=plan.collection,
        task=question.task, purpose=question.purpose, status="error", seconds=round(seconds, 1), error=error,
        caller=by,
    )


def no_answer_error(deadline_s: float) -> str:
    return f"no answer in {deadline_s:g}s"


def panel_answered(plan: Plan, ask: Ask, by: str, merge: Merge | None = None) -> PanelAnswered:
    """P-16: the call log line. System and prompt as flattened, images as placeholders; the merger's call
    last when one was called, and the reply as `bench.reply` gives it."""
    calls = [seat.call for seat in plan.seats]
    if merge is not None and merge.seat is not None:
        calls.append(merge.seat.call)
    return PanelAnswered(
        id=f"answered:{plan.panel}", by=by, panel=plan.panel, collection=plan.collection, shape=plan.shape,
        shape_by=plan.shape_by, reply="merged" if merge is not None and merge.merged else "all",
        key=ask.caller, system=ask.system, prompt=ask.prompt, calls=calls,
        note=merge.note if merge is not None else "",
    )

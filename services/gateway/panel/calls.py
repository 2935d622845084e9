"""The bus messages a panel sends and the ones the gateway writes itself. Pure.

Each seat becomes one `SeatCall` on the callers' work queue: text-only seats get the flattened system and
prompt (P-10); with images, seats get the request's messages as sent (P-6). When no caller answers by the
deadline, the gateway writes the seat's `SeatCompleted` itself; its id is the one a caller would use, so
whichever reaches the stream first is the seat's answer.
"""

from __future__ import annotations

from typing import Literal

from services.gateway.ask import Ask
from services.gateway.panel.text import seat_task
from shared.commands import Msg, Plan, SeatCall
from shared.events import EndpointSaved, PanelAnswered, SeatCompleted, SeatPlan


def seat_messages(ask: Ask) -> list[Msg]:
    if ask.images:
        return [Msg.model_validate(m) for m in ask.messages]
    messages = [Msg(role="system", content=ask.system)] if ask.system else []
    return [*messages, Msg(role="user", content=ask.prompt)]


def seat_call(
    plan: Plan, seat: SeatPlan, ask: Ask, endpoint: EndpointSaved, deadline: float, timeout_s: float
) -> SeatCall:
    return SeatCall(
        call=seat.call, panel=plan.panel, seat=seat.seat, alias=seat.alias, served=seat.served,
        endpoint=endpoint.name, base=endpoint.base, api=endpoint.api, headers=dict(endpoint.headers),
        connection=seat.connection, collection=plan.collection,
        task=seat_task(ask.prompt, plan.collection, plan.shape), purpose="panel",
        messages=seat_messages(ask), deadline=deadline, timeout_s=timeout_s,
    )


def seat_failed(plan: Plan, seat: SeatPlan, ask: Ask, error: str, seconds: float, by: str) -> SeatCompleted:
    """A seat no caller answered (deadline) or that could not be queued: an error, recorded like any seat."""
    return SeatCompleted(
        id=f"seat:{seat.call}", by=by, call=seat.call, panel=plan.panel, seat=seat.seat, alias=seat.alias,
        served=seat.served, endpoint=seat.endpoint, connection=seat.connection, collection=plan.collection,
        task=seat_task(ask.prompt, plan.collection, plan.shape), purpose="panel", status="error",
        seconds=round(seconds, 1), error=error, caller=by,
    )


def no_answer_error(deadline_s: float) -> str:
    return f"no answer in {deadline_s:g}s"


def panel_answered(
    plan: Plan, ask: Ask, reply: Literal["all", "merged"], by: str, note: str = ""
) -> PanelAnswered:
    """P-16: the call log line. System and prompt as flattened, images as placeholders."""
    return PanelAnswered(
        id=f"answered:{plan.panel}", by=by, panel=plan.panel, collection=plan.collection, shape=plan.shape,
        shape_by=plan.shape_by, reply=reply, system=ask.system, prompt=ask.prompt,
        calls=[seat.call for seat in plan.seats], note=note,
    )

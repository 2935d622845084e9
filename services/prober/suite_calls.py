"""The messages of a suite pass (T-2, T-6). Pure.

Each task becomes one `SeatCall` (purpose `suite`) on the callers' work queue, so a pass goes where every
seat goes: paced under the connection's limits, keys read only by the callers, the free-tier guard first.
Its answer comes back as the seat's `seat_completed`; the score is then one `suite_answered` event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.commands import Msg, SeatCall
from shared.config_state import ConfigState
from shared.events import SeatCompleted, SuiteAnswered
from shared.ids import digest
from suite.scoring import Score, score, wrong_kind
from suite.task import Task

RUN_PREFIX = "s"
SUITE_SEAT = "suite"


class NotRunnable(ValueError):
    """No pass can run as asked: `status` is 404 for a model or task that does not exist, else 400."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Asked:
    """A task and the prompt built from it (its attachments read)."""

    task: Task
    prompt: str


def suite_call(
    run: str, n: int, asked: Asked, alias: str, config: ConfigState, deadline: float, timeout_s: float
) -> SeatCall:
    model = config.models.get(alias)
    if model is None:
        raise NotRunnable(f"{alias!r} is not a registered model", 404)
    endpoint = config.endpoints.get(model.endpoint)
    if endpoint is None:
        raise NotRunnable(f"{alias!r} is on endpoint {model.endpoint!r}, which is not saved")
    return SeatCall(
        call=f"{run}.t{n}", panel=run, seat=SUITE_SEAT, alias=alias, served=model.served,
        endpoint=endpoint.name, base=endpoint.base, api=endpoint.api, headers=dict(endpoint.headers),
        connection=config.connection_of(alias), task=f"{asked.task.id} (suite)", purpose="suite",
        messages=[Msg(role="user", content=asked.prompt)], deadline=deadline, timeout_s=timeout_s,
        options={"max_tokens": model.max_tokens} if model.max_tokens else {}, config_seq=config.seq,
    )


def scored(task: Task, seat: SeatCompleted | None, waited_s: float) -> Score:
    if seat is None:
        return Score("timeout", f"no answer in {waited_s:g}s")
    return score(task, seat.answer, seat.status, seat.error)


def answered(run: str, call: SeatCall, task: Task, result: Score, seconds: float, by: str) -> SuiteAnswered:
    return SuiteAnswered(
        id=f"suite:{call.call}", by=by, run=run, call=call.call, task=task.id, alias=call.alias,
        **score_fields(task, result), seconds=round(seconds, 1),
    )


def score_fields(task: Task, result: Score) -> dict[str, Any]:
    return dict(
        shape=task.shape, draft=task.draft, control_of=task.control_of, recall=task.counts_for_recall(),
        kind=result.kind, reason=result.reason, found=list(result.found), missed=list(result.missed),
        invented=list(result.invented), wrong=wrong_kind(task) if result.confidently_wrong else "",
        format_problems=list(result.format_problems),
    )


def rescored(old: SuiteAnswered, task: Task, seat: SeatCompleted, by: str) -> SuiteAnswered | None:
    """T-5: the stored answer scored again with today's task and scorer; `None` when nothing changes. The
    new event keeps the answer's time (it is the same answer) under an id of its own."""
    fields = score_fields(task, scored(task, seat, 0.0))
    if all(getattr(old, name) == value for name, value in fields.items()):
        return None
    tag = digest(*(f"{name}={value}" for name, value in sorted(fields.items())), size=12)
    return old.model_copy(update={**fields, "id": f"suite:{old.call}:rescored:{tag}", "by": by})

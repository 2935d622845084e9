"""The messages of a suite pass: a seat call per task, its score as `suite_answered`, and T-5's re-scoring."""

from __future__ import annotations

import pytest

from services.prober.suite_calls import Asked, NotRunnable, answered, rescored, scored, suite_call
from shared.config_state import ConfigState
from shared.events import EndpointSaved, ModelRegistered, SeatCompleted
from suite.task import Task

TASK = Task(id="race", title="race", prompt="Where is the race?", must_find=["race"], must_not_claim=["leak"])
ANSWER = "The race is between the read and the write of the window document, two callers at once."


def config() -> ConfigState:
    state = ConfigState()
    state.apply(EndpointSaved(id="cfg:ep", name="ep", base="http://127.0.0.1:9/v1"), 1)
    state.apply(ModelRegistered(id="cfg:m", alias="m", served="org/m", endpoint="ep", max_tokens=900), 2)
    return state


def seat(answer: str = ANSWER) -> SeatCompleted:
    return SeatCompleted(id="seat:s1.t1", call="s1.t1", panel="s1", seat="suite", alias="m", served="org/m",
                         endpoint="ep", connection="ep", purpose="suite", status="ok", seconds=2.0,
                         answer=answer)


def test_a_task_becomes_a_suite_seat_call_with_the_models_own_options() -> None:
    call = suite_call("s1", 1, Asked(TASK, "the prompt"), "m", config(), deadline=100.0, timeout_s=50.0)
    assert (call.call, call.panel, call.purpose, call.seat, call.task) == ("s1.t1", "s1", "suite", "suite",
                                                                             "race (suite)")
    assert [m.content for m in call.messages] == ["the prompt"] and call.options == {"max_tokens": 900}
    assert call.config_seq == 2 and call.base == "http://127.0.0.1:9/v1"
    with pytest.raises(NotRunnable) as unknown:
        suite_call("s1", 1, Asked(TASK, "p"), "nobody", config(), 100.0, 50.0)
    assert unknown.value.status == 404


def test_a_silent_task_is_a_timeout() -> None:
    assert scored(TASK, None, 30.0).kind == "timeout"


def test_rescoring_changes_only_what_todays_task_changes() -> None:
    call = suite_call("s1", 1, Asked(TASK, "p"), "m", config(), 100.0, 50.0)
    first = answered("s1", call, TASK, scored(TASK, seat(), 50.0), 2.0, "prober")
    assert (first.id, first.found) == ("suite:s1.t1", ["race"])
    assert rescored(first, TASK, seat(), "prober") is None  # same task, same scorer: nothing new
    stricter = TASK.model_copy(update={"must_find": ["race", "compare-and-set"]})
    again = rescored(first, stricter, seat(), "prober")
    assert again is not None and again.id.startswith("suite:s1.t1:rescored:")
    assert (again.at, again.call, again.found, again.missed) == (first.at, first.call, ["race"],
                                                                  ["compare-and-set"])
    assert rescored(again, stricter, seat(), "prober") is None

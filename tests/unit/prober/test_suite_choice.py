"""T-6: which model a scheduled pass tests and which six tasks it asks."""

from __future__ import annotations

from datetime import timedelta

from services.prober.suite_choice import SuiteHistory, pick_model, pick_tasks
from shared.config_state import ConfigState
from shared.events import EndpointSaved, ModelRegistered, ModelUpdated
from suite.task import Task
from tests.unit.ledger.factories import T0, SuiteKind, suite_answered


def tasks(*ids: str, draft: tuple[str, ...] = ()) -> list[Task]:
    return [Task(id=i, title=i, prompt="p", must_find=["x"], draft=i in draft) for i in ids]


def config(*served: str) -> ConfigState:
    state = ConfigState()
    state.apply(EndpointSaved(id="cfg:ep", name="ep", base="http://127.0.0.1:1/v1"))
    for s in served:
        alias = s.replace(":free", "-free")
        state.apply(ModelRegistered(id=f"cfg:{s}", alias=alias, served=s, endpoint="ep"))
    return state


def history(*answers: tuple[str, str, int, SuiteKind]) -> SuiteHistory:
    """(alias, task, minutes after T0, kind) each."""
    h = SuiteHistory()
    for n, (alias, task, minutes, kind) in enumerate(answers, 1):
        h.apply(suite_answered(alias, task, n=n, at=T0 + timedelta(minutes=minutes), kind=kind))
    return h


def test_next_free_takes_a_free_model_never_scored_else_the_least_recently_scored() -> None:
    state = config("a:free", "b:free", "paid")
    assert pick_model(state, history(("a-free", "t1", 5, "answered")), "free", tasks("t1")) == "b-free"
    scored = history(("a-free", "t1", 5, "answered"), ("b-free", "t1", 1, "answered"))
    assert pick_model(state, scored, "free", tasks("t1")) == "b-free"


def test_next_takes_a_paid_model_never_scored_then_incomplete_then_oldest() -> None:
    state = config("p1", "p2", "f:free")
    assert pick_model(state, SuiteHistory(), "paid", tasks("t1")) == "p1"
    incomplete = history(("p1", "t1", 1, "answered"), ("p2", "t1", 9, "answered"),
                         ("p2", "t2", 9, "answered"))
    assert pick_model(state, incomplete, "paid", tasks("t1", "t2")) == "p1"
    complete = history(("p1", "t1", 5, "answered"), ("p2", "t1", 2, "answered"))
    assert pick_model(state, complete, "paid", tasks("t1")) == "p2"


def test_ad_hoc_models_are_never_picked() -> None:
    state = config("p1", "p2")
    state.apply(ModelUpdated(id="cfg:adhoc", alias="p1", ad_hoc=True))
    assert pick_model(state, SuiteHistory(), "paid", tasks("t1")) == "p2"
    assert pick_model(state, SuiteHistory(), "free", tasks("t1")) is None


def test_at_most_six_tasks_unanswered_and_capacity_failures_first_then_the_oldest_answers() -> None:
    ids = [f"t{i}" for i in range(1, 10)]
    h = history(("m", "t1", 1, "answered"), ("m", "t2", 3, "answered"), ("m", "t3", 2, "answered"),
                ("m", "t4", 4, "answered"), ("m", "t5", 5, "answered"), ("m", "t6", 6, "answered"))
    failed = suite_answered("m", "t4", n=99, at=T0 + timedelta(minutes=7), kind="error")
    h.apply(failed.model_copy(update={"reason": "says 'rate limit' instead of answering"}))
    chosen = pick_tasks(tasks(*ids, draft=("t9",)), h, "m")
    assert [t.id for t in chosen] == ["t4", "t7", "t8", "t1", "t3", "t2"]


def test_a_non_capacity_error_is_an_answer_like_any_other() -> None:
    h = history(("m", "t1", 1, "error"))
    assert [t.id for t in pick_tasks(tasks("t1", "t2"), h, "m", limit=1)] == ["t2"]

"""The suite's results as the ledger folds them (T-5): the latest answer per model and task counts, a
non-answer never replaces an answer, routing recall sums only the tasks that count, and every confidently
wrong answer is listed."""

from __future__ import annotations

from datetime import timedelta

from services.ledger.fold import fold_batch
from services.ledger.store import Store
from shared import bus, subjects
from shared.events import EventBase
from tests.integration.ledger.process import LedgerProcess, ask, publish_all
from tests.unit.ledger.factories import T0, answered, completed, recorded, seated, suite_answered

ANSWERS: list[EventBase] = [
    suite_answered("a", "race", found=1, missed=1, n=1),
    suite_answered("a", "race", found=2, missed=0, n=2, at=T0 + timedelta(minutes=1)),  # asked again
    suite_answered("a", "race", kind="timeout", found=0, n=3, at=T0 + timedelta(minutes=2)),  # no answer
    suite_answered("a", "claim-1", found=0, missed=1, n=4, shape="claim", recall=False,
                   wrong="wrong verdict"),
    suite_answered("b", "seed-x-control", found=0, missed=1, n=5, shape="seeded", recall=False,
                   wrong="false alarm", at=T0 + timedelta(minutes=3)),
]


def test_the_latest_answer_per_task_counts_and_the_confidently_wrong_are_listed(store: Store) -> None:
    store.apply(fold_batch(enumerate(ANSWERS, 1)), len(ANSWERS))
    results = store.suite_results("")
    assert [(m.alias, m.answered, m.found, m.of, m.recall, m.confidently_wrong) for m in results.models] == [
        ("a", 2, 2, 2, 1.0, 1), ("b", 1, 0, 0, None, 1)]
    assert [(s.alias, s.shape, s.found, s.of) for s in results.shapes] == [
        ("a", "claim", 0, 1), ("a", "review", 2, 2), ("b", "seeded", 0, 1)]
    assert [(w.alias, w.task, w.wrong, w.invented) for w in results.wrong] == [
        ("b", "seed-x-control", "false alarm", ["x"]), ("a", "claim-1", "wrong verdict", ["x"])]
    assert [m.alias for m in store.suite_results("b").models] == ["b"]


async def test_the_view_over_the_bus(nc: bus.NATS, ledger: LedgerProcess) -> None:
    await publish_all(nc, ANSWERS)
    reply = await ask(nc, subjects.RPC_LEDGER_SUITE, {"alias": "a"})
    assert [(m["alias"], m["found"], m["of"]) for m in reply["models"]] == [("a", 2, 2)]
    assert [w["task"] for w in reply["wrong"]] == ["claim-1"]


def test_judged_claims_come_with_their_panels_prompt(store: Store) -> None:
    panel = "p20261202-093000-abcd"
    calls = [f"{panel}.member1", f"{panel}.member2"]
    events = [seated(panel), completed(calls[0], alias="a"), completed(calls[1], alias="b"),
              answered(panel, calls), recorded(calls[0], "a", True, n=1), recorded(calls[1], "b", False, n=2),
              recorded(calls[1], "b", True, n=3, at=T0 + timedelta(minutes=1))]  # b's latest
    store.apply(fold_batch(enumerate(events, 1)), len(events))
    claims = store.judged_claims(10)
    assert [(c.call, c.real, c.false, c.prompt) for c in claims] == [
        (f"{panel}.member1", ["the race"], [], "find the race in refresh()"),
        (f"{panel}.member2", ["the race"], [], "find the race in refresh()"),
    ]


def test_a_rescoring_is_a_row_of_its_own_and_the_view_takes_it(store: Store) -> None:
    original = suite_answered("a", "race", found=1, missed=1, n=1)
    again = original.model_copy(update={"id": f"{original.id}:rescored:abc", "found": ["f0", "f1"],
                                        "missed": []})
    store.apply(fold_batch([(1, original), (2, again)]), 2)
    assert store.counts()["suite_answers"] == 2
    [model] = store.suite_results("a").models
    assert (model.found, model.of) == (2, 2)

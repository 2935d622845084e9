"""The starter pack (`suite/starter/`) loads as it ships: no task refused, every seeded bug with its control,
reviewed (no drafts), and a right answer to each task scores as found with nothing invented."""

from __future__ import annotations

from pathlib import Path

from suite.clauses import label
from suite.scoring import score
from suite.task import Task, build_prompt, load_suite

STARTER = Path(__file__).resolve().parents[3] / "suite" / "starter"
WHY = " The lines above decide it, as the explanation in the task's own notes says."


def right_answer(task: Task) -> str:
    if task.shape == "claim":
        return label(task.must_find[0]) + WHY
    if task.is_control:
        return "NO FAULT" + WHY
    if task.shape == "seeded":
        return f"FAULT: line {task.why.split('line ', 1)[1].split(':', 1)[0]}" + WHY
    return "There is a race: two callers read the same window and both put." + WHY


def test_the_starter_pack_loads_and_is_reviewed() -> None:
    loaded, refused = load_suite(STARTER, {})
    assert refused == [] and len(loaded) >= 10
    tasks = {t.id: t for t, _ in loaded}
    assert not any(t.draft for t in tasks.values())
    bugs = {t.id for t in tasks.values() if t.shape == "seeded" and not t.is_control}
    assert bugs == {t.control_of for t in tasks.values() if t.is_control}
    assert all(build_prompt(t, folder, {}) for t, folder in loaded)


def test_a_right_answer_to_each_starter_task_is_found_with_nothing_invented() -> None:
    for task, _ in load_suite(STARTER, {})[0]:
        got = score(task, right_answer(task))
        assert (got.kind, got.missed, got.invented) == ("answered", (), ()), task.id

"""T-4: one token or line of a real function changes, the line is the fixture's, and nothing that leaves the
syntax tree unchanged is kept; `bench suite seed` refuses a folder that is not a git work tree."""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path

import pytest

from suite.seed_repo import NotAWorkTree, plan, write
from suite.seeding import Function, functions, mutations
from suite.task import load_suite

ROOT = Path(__file__).resolve().parents[3]

SAMPLE = '''\
def window(items, limit, strict=True):
    total = 0
    for i in range(0, len(items)):
        if items[i] is not None and total < limit:
            total += items[i]
        elif strict or i == 3:
            break
        log(total, limit)
    return pick(items[1:], total)
'''


def kinds_at() -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for m in mutations(Function("window", SAMPLE)):
        found.setdefault(m.kind, set()).add(m.line)
    return found


def test_every_kind_of_the_list_is_found_on_its_line() -> None:
    assert kinds_at() == {
        "range/slice off-by-one": {3, 9},
        "removed not": {4},
        "and/or": {4, 6},
        "comparison": {4, 6},
        "+=/-=": {5},
        "True/False": {1},
        "constant ±1": {2, 6},
        "break/continue": {7},
        "swapped args": {3, 8, 9},
        "deleted call": {8},
    }


def test_a_mutation_changes_one_line_or_deletes_one() -> None:
    before = SAMPLE.splitlines()
    for m in mutations(Function("window", SAMPLE)):
        after = m.source.splitlines()
        if m.kind == "deleted call":
            assert after == before[:m.line - 1] + before[m.line:] and m.lines == (m.line - 1, m.line)
        else:
            assert [i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [m.line]
            assert (m.before, m.after) == (before[m.line - 1], after[m.line - 1])


def test_swapping_the_arguments_of_max_or_min_is_no_bug() -> None:
    source = "def f(a, b):\n    x = max(a, b)\n    y = min(a, b)\n    return x - y\n"
    assert [m for m in mutations(Function("f", source)) if m.kind == "swapped args"] == []


REAL = ["services/caller/pacing.py", "services/seater/ranking.py", "suite/clauses.py"]


@pytest.mark.parametrize("path", REAL)
def test_on_this_repositorys_code_every_mutation_parses_and_changes_the_tree(path: str) -> None:
    for function in functions((ROOT / path).read_text()):
        original = ast.dump(ast.parse(function.source))
        for m in mutations(function):
            assert ast.dump(ast.parse(m.source)) != original


def test_a_folder_that_is_not_a_work_tree_is_refused_and_nothing_written(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SAMPLE)
    with pytest.raises(NotAWorkTree):
        plan(tmp_path, 5, 0)
    with pytest.raises(NotAWorkTree):
        plan(tmp_path / "missing", 5, 0)


def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "lib.py").write_text(SAMPLE)
    (repo / "tests" / "test_lib.py").write_text(SAMPLE.replace("window", "test_window"))
    (repo / "untracked.py").write_text(SAMPLE.replace("window", "other"))
    run = ["git", "-C", str(repo)]
    subprocess.run([*run, "init", "-q"], check=True)
    subprocess.run([*run, "add", "lib.py", "tests/test_lib.py"], check=True)
    # A fixed date: two repositories made in different seconds have the same commit (a draft names it).
    date = "2026-01-02T03:04:05Z"
    when = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run([*run, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"], check=True,
                   env=when)
    return repo


def test_a_seeded_pair_from_a_work_tree(tmp_path: Path) -> None:
    drafts = plan(git_repo(tmp_path), 5, 7)
    assert [d.task.id for d in drafts] == [drafts[0].task.id, f"{drafts[0].task.id}-control"]
    bug, control = drafts
    assert bug.task.attach == ["lib.py"] and bug.task.draft and bug.task.shape == "seeded"
    assert control.fixture == SAMPLE and bug.fixture != SAMPLE and control.task.control_of == bug.task.id
    assert plan(git_repo(tmp_path / "again"), 5, 7)[0].task == bug.task  # the same seed, the same draft


def test_drafts_are_written_once_and_load_back(tmp_path: Path) -> None:
    drafts = plan(git_repo(tmp_path), 5, 1)
    out = tmp_path / "tasks"
    assert write(drafts, out) == ([d.task.id for d in drafts], [])
    assert write(drafts, out) == ([], [d.task.id for d in drafts])
    bug = drafts[0].task
    stored = json.loads((out / bug.id / "task.json").read_text())
    assert stored["id"] == bug.id and (out / bug.id / "fixtures" / "lib.py").read_text() == drafts[0].fixture
    loaded, refused = load_suite(out, {})
    assert refused == [] and [t for t, _ in loaded] == sorted((d.task for d in drafts), key=lambda t: t.id)

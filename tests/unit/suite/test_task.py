"""T-1: a task folder loads into a validated task, or is refused with the field and the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from suite.task import TaskRefused, build_prompt, load_suite, load_task


def write(
    root: Path, task_id: str, fields: dict[str, Any] | str, fixtures: dict[str, str] | None = None
) -> Path:
    folder = root / task_id
    (folder / "fixtures").mkdir(parents=True)
    body = fields if isinstance(fields, str) else json.dumps({"id": task_id, "title": "t", **fields})
    (folder / "task.json").write_text(body)
    for name, text in (fixtures or {}).items():
        (folder / "fixtures" / name).write_text(text)
    return folder


def test_a_task_with_a_fixture_builds_its_prompt(tmp_path: Path) -> None:
    folder = write(tmp_path, "claim-1", {"prompt": "Is it so?", "attach": ["services/x.py"],
                                         "must_find": ["yes"]}, {"x.py": "def f(): pass\n"})
    task = load_task(folder)
    assert build_prompt(task, folder, {}) == "Is it so?\n\n===== FILE: services/x.py =====\ndef f(): pass\n"


def test_a_task_from_a_registered_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("A = 1\n")
    folder = write(tmp_path / "tasks", "r1", {"prompt": "p", "repo": "mine", "attach": ["pkg/a.py"],
                                              "must_find": ["x"]})
    task = load_task(folder, {"mine": repo})
    assert build_prompt(task, folder, {"mine": repo}) == "p\n\n===== FILE: pkg/a.py =====\nA = 1\n"


def test_a_missing_attachment_skips_the_task(tmp_path: Path) -> None:
    folder = write(tmp_path, "t1", {"prompt": "p", "attach": ["gone.py"], "must_find": ["x"]})
    assert build_prompt(load_task(folder), folder, {}) is None


@pytest.mark.parametrize(("fields", "field", "reason"), [
    ({"prompt": "p"}, "must_find", "something to find"),
    ({"prompt": "", "must_find": ["x"]}, "prompt", "at least 1 character"),
    ({"prompt": "p", "must_find": [{"regex": "("}]}, "must_find.0", "not a regular expression"),
    ({"prompt": "p", "must_find": [{"any_of": []}]}, "must_find.0", "at least 1 item"),
    ({"prompt": "p", "must_find": ["x"], "score_in": "last_line"}, "score_in", "first_line"),
    ({"prompt": "p", "must_find": ["x"], "colour": "red"}, "colour", "Extra inputs"),
    ({"prompt": "p", "must_find": ["x"], "attach": ["../../etc/passwd"]}, "attach", "above its root"),
    ({"prompt": "p", "must_find": ["x"], "attach": ["/etc/passwd"]}, "attach", "absolute"),
    ({"prompt": "p", "must_find": ["x"], "repo": "nowhere"}, "repo", "config/repos.json"),
    ({"prompt": "p", "must_find": ["x"], "min_answer_chars": -1}, "min_answer_chars", "greater than"),
])
def test_a_bad_task_is_refused_with_field_and_reason(
    tmp_path: Path, fields: dict[str, Any], field: str, reason: str
) -> None:
    with pytest.raises(TaskRefused) as refused:
        load_task(write(tmp_path, "bad", fields))
    assert refused.value.field.startswith(field) and reason in refused.value.reason


def test_a_task_file_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskRefused, match="does not parse"):
        load_task(write(tmp_path, "bad", "{not json"))


def test_an_id_that_is_not_its_folder_is_refused(tmp_path: Path) -> None:
    folder = write(tmp_path, "here", {"prompt": "p", "must_find": ["x"]})
    other = {"id": "there", "title": "t", "prompt": "p", "must_find": ["x"]}
    (folder / "task.json").write_text(json.dumps(other))
    with pytest.raises(TaskRefused, match="folder"):
        load_task(folder)


def test_a_symlink_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (tmp_path / "secret.txt").write_text("key")
    (repo / "link.txt").symlink_to(tmp_path / "secret.txt")
    fields = {"prompt": "p", "repo": "mine", "attach": ["link.txt"], "must_find": ["x"]}
    write(tmp_path / "tasks", "s1", fields)
    tasks, refused = load_suite(tmp_path / "tasks", {"mine": repo})
    assert tasks == [] and refused[0].field == "attach" and "symlink" in refused[0].reason


def test_the_suite_loads_the_good_and_names_the_bad(tmp_path: Path) -> None:
    write(tmp_path, "a", {"prompt": "p", "must_find": ["x"]})
    write(tmp_path, "b", "[]")
    tasks, refused = load_suite(tmp_path, {})
    assert [t.id for t, _ in tasks] == ["a"] and [r.task for r in refused] == ["b"]

"""A suite task (T-1): `suite/tasks/<id>/task.json`, validated on load; a bad one is refused with the field
and the reason, never half-run.

Attachments are read from the repository the task names (a name mapped to a folder by `config/repos.json`),
else from the task's own `fixtures/<basename>`. A path that would leave its root (absolute, `..`, or a
symlink out) is refused; a path that is simply missing skips the task when it is run.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from suite.clauses import Clause

TASK_FILE = "task.json"
FIXTURES = "fixtures"
ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,119}$"
# T-3: shapes scored by their first line and kept out of routing recall (T-5).
VERDICT_SHAPES = ("claim", "seeded", "rebench")


class TaskRefused(ValueError):
    """A task that cannot be run: where (`field`) and why."""

    def __init__(self, task: str, field: str, reason: str) -> None:
        super().__init__(f"{task}: {field}: {reason}")
        self.task, self.field, self.reason = task, field, reason


class Format(BaseModel):
    """Checked apart from the score (T-2): the answer's shape, not its findings."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    table: bool = False
    min_rows: int = Field(default=0, ge=0)
    min_chars: int = Field(default=0, ge=0)
    must_not_contain: list[str] = Field(default_factory=list)


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    title: Annotated[str, Field(min_length=1)]
    prompt: Annotated[str, Field(min_length=1)]
    attach: list[str] = Field(default_factory=list)
    repo: str = ""
    must_find: list[Clause] = Field(default_factory=list)
    must_not_claim: list[Clause] = Field(default_factory=list)
    shape: Annotated[str, Field(min_length=1)] = "review"
    score_in: Literal["all", "first_line"] = "all"
    must_not_claim_in: Literal["all", "table"] = "all"
    min_answer_chars: int = Field(default=40, ge=0)
    format: Format | None = None
    draft: bool = False
    # T-3: a control names the bug task it stands beside; its right answer is NO FAULT.
    control_of: str = ""
    why: str = ""
    kind: str = ""
    source: str = ""
    upstream: str = ""
    source_url: str = ""
    created: str = ""
    license: str = ""

    @field_validator("attach")
    @classmethod
    def inside(cls, paths: list[str]) -> list[str]:
        for path in paths:
            problem = outside(path)
            if problem:
                raise ValueError(f"{path!r} {problem}")
        return paths

    @property
    def is_control(self) -> bool:
        return bool(self.control_of)

    def counts_for_recall(self) -> bool:
        """T-5: routing recall is summed over non-draft tasks outside the verdict shapes."""
        return not self.draft and self.shape not in VERDICT_SHAPES


def outside(path: str) -> str:
    """Why an attachment path could leave its root ("" when it cannot by its spelling alone)."""
    if not path.strip():
        return "is empty"
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        return "is absolute"
    if ".." in PurePosixPath(path.replace("\\", "/")).parts:
        return "goes above its root (..)"
    return ""


def resolve(root: Path, path: str) -> Path:
    """The attachment under `root`, symlinks followed; refused when that lands outside `root`."""
    real_root = root.resolve()
    target = (real_root / path).resolve()
    if not target.is_relative_to(real_root):
        raise TaskRefused("", "attach", f"{path!r} leaves its root ({root}) through a symlink")
    return target


def read_repos(home: Path) -> dict[str, Path]:
    """`config/repos.json`: repository name → folder (relative folders are under the data folder)."""
    file = home / "config" / "repos.json"
    if not file.is_file():
        return {}
    data = json.loads(file.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{file}: a JSON object of name → folder")
    return {str(name): (home / str(folder)).resolve() for name, folder in data.items()}


def load_task(folder: Path, repos: dict[str, Path] | None = None) -> Task:
    """The task in `folder`, or `TaskRefused` naming the field and the reason."""
    name = folder.name
    try:
        raw = json.loads((folder / TASK_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskRefused(name, TASK_FILE, "missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TaskRefused(name, TASK_FILE, f"does not parse: {exc}") from None
    try:
        task = Task.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or TASK_FILE
        raise TaskRefused(name, field, first["msg"].removeprefix("Value error, ")) from None
    if task.id != name:
        raise TaskRefused(name, "id", f"{task.id!r} is not its folder's name {name!r}")
    if task.repo and task.repo not in (repos or {}):
        raise TaskRefused(name, "repo", f"{task.repo!r} is not in config/repos.json")
    if not task.must_find and not task.must_not_claim:
        raise TaskRefused(name, "must_find", "a task needs something to find or something not to claim")
    return task


def attachment_root(task: Task, folder: Path, repos: dict[str, Path]) -> Path:
    return repos[task.repo] if task.repo else folder / FIXTURES


def attachment_path(task: Task, folder: Path, repos: dict[str, Path], path: str) -> Path:
    root = attachment_root(task, folder, repos)
    try:
        return resolve(root, path if task.repo else PurePosixPath(path).name)
    except TaskRefused as refused:
        raise TaskRefused(task.id, refused.field, refused.reason) from None


def build_prompt(task: Task, folder: Path, repos: dict[str, Path]) -> str | None:
    """T-1: the task's prompt, then each attachment as `===== FILE: <path> =====` and its text; `None` when
    an attachment is missing (the task is skipped, not refused)."""
    parts = [task.prompt]
    for path in task.attach:
        file = attachment_path(task, folder, repos, path)
        if not file.is_file():
            return None
        parts.append(f"===== FILE: {path} =====\n{file.read_text(encoding='utf-8', errors='replace')}")
    return "\n\n".join(parts)


def load_suite(root: Path, repos: dict[str, Path]) -> tuple[list[tuple[Task, Path]], list[TaskRefused]]:
    """Every task folder under `root`, in name order: the tasks that load, and the refusals."""
    tasks: list[tuple[Task, Path]] = []
    refused: list[TaskRefused] = []
    if not root.is_dir():
        return tasks, refused
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            task = load_task(folder, repos)
            for path in task.attach:
                attachment_path(task, folder, repos, path)
            tasks.append((task, folder))
        except TaskRefused as exc:
            refused.append(exc)
    return tasks, refused


def write_tasks(tasks: list[tuple[Task, dict[str, str]]], out: Path) -> tuple[list[str], list[str]]:
    """Each task as `<out>/<id>/task.json` with its fixtures (base name → text); a task folder that exists
    is left alone. Returns (written, already there)."""
    written, kept = [], []
    for task, fixtures in tasks:
        folder = out / task.id
        if folder.exists():
            kept.append(task.id)
            continue
        (folder / FIXTURES).mkdir(parents=True)
        for name, text in fixtures.items():
            (folder / FIXTURES / PurePosixPath(name).name).write_text(text, encoding="utf-8")
        body = task.model_dump(mode="json", exclude_defaults=True)
        document = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
        (folder / TASK_FILE).write_text(document, encoding="utf-8")
        written.append(task.id)
    return written, kept

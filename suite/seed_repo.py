"""`bench suite seed --repo PATH` (T-4): bug and control drafts from a git work tree's own functions.

Files are the work tree's tracked `.py` files (`git ls-files`, with the repository's fsmonitor and hooks
turned off, so git runs nothing of the repository's). Everything is decided before anything is written: a
path that is not a work tree is refused and nothing is written. A task folder that exists is left alone.
"""

from __future__ import annotations

import random
import re
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from suite.scoring import FALSE_ALARM, NO_FAULT, fault_at, fault_elsewhere
from suite.seeding import Function, Mutation, functions, mutations, pick
from suite.task import Task, write_tasks

GIT_SAFE = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
PROMPT = (
    "Review the code in the file below. It may hold one bug, made by changing a single token or line, or it "
    "may be correct. Answer with a first line that is exactly `FAULT: line <n>` (n counts the file's lines "
    "from 1) or `NO FAULT`, then say why in a few sentences."
)


class NotAWorkTree(ValueError):
    pass


@dataclass(frozen=True)
class Draft:
    task: Task
    fixture: str  # the fixture's text, stored as fixtures/<basename of attach[0]>


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *GIT_SAFE, "-C", str(repo), *args], capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0:
        raise NotAWorkTree(f"{repo} is not a git work tree ({done.stderr.strip()[:200] or 'git refused'})")
    return done.stdout


def tracked_python(repo: Path) -> tuple[Path, str, list[str]]:
    """The work tree's top, its commit, and its tracked `.py` files (relative, sorted)."""
    if not repo.is_dir():
        raise NotAWorkTree(f"{repo} is not a folder")
    if git(repo, "rev-parse", "--is-inside-work-tree").strip() != "true":
        raise NotAWorkTree(f"{repo} is not a git work tree")
    top = Path(git(repo, "rev-parse", "--show-toplevel").strip())
    head = git(top, "rev-parse", "--verify", "-q", "HEAD").strip() if _has_head(top) else ""
    names = [n for n in git(top, "ls-files", "-z", "--", "*.py").split("\0") if n and not is_test(n)]
    return top, head, sorted(names)


def _has_head(top: Path) -> bool:
    try:
        git(top, "rev-parse", "--verify", "-q", "HEAD")
        return True
    except NotAWorkTree:
        return False


def is_test(path: str) -> bool:
    """Tests are not seeded (a planted bug belongs in the code they test), nor task fixtures (excerpts)."""
    parts = PurePosixPath(path).parts
    return any(p in ("tests", "test", "fixtures") for p in parts[:-1]) or parts[-1].startswith("test_")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def drafts_for(path: str, function: Function, mutation: Mutation, head: str, today: str) -> list[Draft]:
    """The bug draft and its control (same function, unchanged)."""
    bug_id = f"seed-{slug(PurePosixPath(path).stem)}-{slug(function.name)}-{mutation.line}"
    fault, elsewhere = fault_at(*mutation.lines), fault_elsewhere(*mutation.lines)
    change = f"`{mutation.before.strip()}` → `{mutation.after.strip()}`" if mutation.after else (
        f"deleted `{mutation.before.strip()}`")
    common: dict[str, Any] = {
        "prompt": PROMPT, "attach": [path], "shape": "seeded", "score_in": "first_line", "draft": True,
        "kind": mutation.kind, "source": path, "upstream": head, "created": today,
    }
    bug = Task.model_validate({
        **common, "id": bug_id, "title": f"Seeded fault in {function.name} ({path})",
        "must_find": [fault], "must_not_claim": [elsewhere],
        "why": f"{mutation.kind} on line {mutation.line}: {change}",
    })
    control = Task.model_validate({
        **common, "id": f"{bug_id}-control", "title": f"Control: {function.name} unchanged ({path})",
        "must_find": [NO_FAULT], "must_not_claim": [FALSE_ALARM], "control_of": bug_id,
        "why": f"the unchanged code of {bug_id}",
    })
    return [Draft(bug, mutation.source), Draft(control, function.source)]


def plan(repo: Path, count: int, seed: int) -> list[Draft]:
    """Up to `count` bug/control pairs, one per function, functions drawn at random (reproducibly)."""
    top, head, names = tracked_python(repo)
    rng = random.Random(seed)
    today = datetime.now(UTC).date().isoformat()
    pool: list[tuple[str, Function]] = []
    for name in names:
        file = top / name
        if file.is_file() and not file.is_symlink():
            pool += [(name, f) for f in functions(file.read_text(encoding="utf-8", errors="replace"))]
    rng.shuffle(pool)
    drafts: list[Draft] = []
    for name, function in pool:
        if len(drafts) >= 2 * count:
            break
        chosen = pick(mutations(function), rng)
        if chosen is not None:
            drafts += drafts_for(name, function, chosen, head, today)
    return drafts


def write(drafts: list[Draft], out: Path) -> tuple[list[str], list[str]]:
    """Each draft as `<out>/<id>/task.json` and its fixture; (written, already there)."""
    return write_tasks([(d.task, {PurePosixPath(d.task.attach[0]).name: d.fixture}) for d in drafts], out)

"""Mining (T-4): a judged seat's `real` and `false` claims become draft claim tasks. Pure.

The claim is asked as it was judged: a `real` claim's right verdict is TRUE, a `false` one's FALSE. The
files the logged prompt carried (as `bench ask -f` sends them: `` `name`: `` and a fenced block) are frozen
as the task's fixtures, so the task keeps asking about the code that was judged, whatever the code
becomes; a prompt with no file is frozen whole as `prompt.md`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from suite.scoring import verdict
from suite.seed_repo import slug
from suite.task import Task

FILE_BLOCK = re.compile(r"^`([^`\n]+)`:\n```[^\n]*\n(.*?)\n```", re.MULTILINE | re.DOTALL)
CLAIM_PROMPT = ("Is the claim below true of the code in the attached files? Answer with a first line that is "
                "exactly `VERDICT: TRUE` or `VERDICT: FALSE`, then give the lines that decide it.\n\nClaim: ")
WHOLE_PROMPT = "prompt.md"


@dataclass(frozen=True)
class Judged:
    """A call's latest verdict with claims, and the prompt its panel logged."""

    call: str
    alias: str
    prompt: str
    real: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Mined:
    task: Task
    fixtures: dict[str, str]  # basename → text


def files_in(prompt: str) -> dict[str, str]:
    """The files a prompt carried, by base name (the first of two that share one)."""
    found: dict[str, str] = {}
    for name, text in FILE_BLOCK.findall(prompt):
        base = PurePosixPath(name.strip()).name
        if base and base not in found and not base.startswith("."):
            found[base] = text + "\n"
    return found


def mined(judged: Judged) -> list[Mined]:
    fixtures = files_in(judged.prompt) or {WHOLE_PROMPT: judged.prompt}
    claims = [(c, True) for c in judged.real] + [(c, False) for c in judged.false]
    tasks = []
    for n, (claim, truth) in enumerate(claims, 1):
        judged_as = "real" if truth else "false"
        task = Task(
            id=f"mined-{slug(judged.call)}-{n}", title=f"Claim judged {judged_as}: {claim[:70]}",
            prompt=CLAIM_PROMPT + claim, attach=sorted(fixtures), shape="claim", score_in="first_line",
            must_find=[verdict(truth)], must_not_claim=[verdict(not truth)], draft=True, kind="mined",
            source=judged.call, why=f"judged {judged_as} on {judged.call} ({judged.alias})",
        )
        tasks.append(Mined(task, fixtures))
    return tasks

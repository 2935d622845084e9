"""`bench suite …`: the review suite (SPEC T-1..T-6). Seeding works on this machine's files: it reads a git
work tree and writes task drafts into the data folder; nothing of the repository is run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.commands import noun_app
from cli.errors import Refused
from cli.output import say, stdout
from cli.settings import UpSettings
from suite.seed_repo import NotAWorkTree, plan, write

app = noun_app("The review suite: tasks with known answers that score models.")


@app.command("seed")
def seed(
    repo: Annotated[Path, typer.Option("--repo", help="A git work tree whose functions get the bugs.")],
    count: Annotated[int, typer.Option(min=1, max=200, help="At most N bug/control pairs.")] = 10,
    seed_value: Annotated[int, typer.Option("--seed", help="Draw seed: the same seed, the same drafts.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Task folder (default: <data folder>/suite/tasks).")] = (
        None
    ),
) -> None:
    """Plant one-token bugs in real functions of a repository (T-4): each a draft task with an unchanged
    control beside it, in the suite's task folder. Drafts are run only by id until reviewed.

    Example:

    \b
      bench suite seed --repo ~/src/myproject --count 5
    """
    target = out if out is not None else UpSettings().home / "suite" / "tasks"
    try:
        drafts = plan(repo.expanduser(), count, seed_value)
    except NotAWorkTree as exc:
        raise Refused(str(exc)) from None
    written, kept = write(drafts, target)
    for task_id in written:
        stdout.print(task_id, markup=False)
    if kept:
        say(f"{len(kept)} already there, left alone: {', '.join(kept)}")
    say(f"{len(written)} drafts written to {target}" if written else "no drafts written")

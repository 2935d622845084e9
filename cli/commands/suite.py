"""`bench suite …`: the review suite (SPEC T-1..T-6). `run` asks the server for a pass (a prober runs it
through the callers); `seed` works on this machine's files: it reads a git work tree and writes task drafts
into the data folder, and runs nothing of the repository."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

import typer

from cli.commands import noun_app
from cli.errors import Refused, UsageProblem
from cli.output import rows_table, say, show, stdout
from cli.session import session
from cli.settings import UpSettings
from suite.mining import Judged, mined
from suite.seed_repo import NotAWorkTree, plan, write
from suite.task import write_tasks

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


def result_rows(results: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        answered = r.get("kind") == "answered"
        found, missed = r.get("found") or [], r.get("missed") or []
        rows.append({"task": r.get("task", ""), "kind": r.get("kind", ""),
                     "found": f"{len(found)}/{len(found) + len(missed)}" if answered else "",
                     "invented": ", ".join(r.get("invented") or []), "wrong": r.get("wrong", ""),
                     "seconds": r.get("seconds", ""), "why": r.get("reason", "")})
    return rows


@app.command("run")
def run(
    ctx: typer.Context,
    model: Annotated[str, typer.Option(help="The model (alias) to test.")] = "",
    task: Annotated[str, typer.Option(help="Only this task (drafts too).")] = "",
    next_paid: Annotated[bool, typer.Option("--next", help="The scheduled choice of a non-free model.")] = (
        False
    ),
    next_free: Annotated[bool, typer.Option("--next-free", help="The scheduled choice of a :free model.")] = (
        False
    ),
) -> None:
    """Run one suite pass now (POST /api/suite/run): the model answers each task through the callers, paced
    like any call, and each answer is scored (T-2). Without --task, at most six tasks: those never answered
    first, then the oldest answers.

    Example:

    \b
      bench suite run --model gpt-mini
      bench suite run --next-free
    """
    if sum([bool(model), next_paid, next_free]) != 1:
        raise UsageProblem("give exactly one of --model ALIAS, --next or --next-free")
    body = {"model": model, "task": task, "next": "paid" if next_paid else "free" if next_free else ""}
    s = session(ctx)
    say("running a suite pass (each task waits for its answer; this takes minutes)…")
    with s.client() as client:
        reply = client.post("/api/suite/run", body)

    def human(data: Any) -> None:
        rows = result_rows(data.get("results") or [])
        columns = ["task", "kind", "found", "invented", "wrong", "seconds", "why"]
        show(rows_table(f"suite pass {data.get('run', '')} · {data.get('alias', '')}", columns, rows))
        for line in data.get("refused") or []:
            say(f"refused: {line}")
        for task_id in data.get("skipped") or []:
            say(f"skipped: {task_id} (an attachment is missing)")
        wrong = sum(1 for r in rows if r["wrong"])
        answered = sum(r["kind"] == "answered" for r in rows)
        say(f"{len(rows)} asked, {answered} answered, {wrong} confidently wrong")

    s.emit(reply, human)


@app.command("results")
def results(
    ctx: typer.Context,
    model: Annotated[str, typer.Option(help="Only this model (alias).")] = "",
    wrong: Annotated[bool, typer.Option("--wrong", help="List the confidently wrong answers.")] = False,
) -> None:
    """Suite scores (GET /api/suite/results): per model its routing recall (found/of over the tasks that
    count, T-5) and how often it was confidently wrong; per model and shape; with --wrong, each confidently
    wrong answer (a false alarm on a control, a wrong line, a wrong verdict, a trap).

    Example:

    \b
      bench suite results
      bench suite results --model gpt-mini --wrong
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/suite/results" + (f"?{urlencode({'alias': model})}" if model else ""))

    def human(data: Any) -> None:
        columns = ["alias", "answered", "found", "of", "recall", "confidently_wrong", "last"]
        show(rows_table("suite: per model", columns, data.get("models") or []))
        show(rows_table("per shape", ["alias", "shape", "answered", "found", "of", "confidently_wrong"],
                        data.get("shapes") or []))
        if wrong:
            show(rows_table("confidently wrong", ["at", "alias", "task", "wrong", "invented", "call"],
                            data.get("wrong") or []))

    s.emit(reply, human)


@app.command("mine")
def mine(
    ctx: typer.Context,
    out: Annotated[Path | None, typer.Option(help="Task folder (default: <data folder>/suite/tasks).")] = (
        None
    ),
    limit: Annotated[int, typer.Option(min=1, max=2000, help="At most N judged calls.")] = 200,
) -> None:
    """Turn judged claims into draft claim tasks (T-4): each `--real`/`--false` claim of a verdict becomes a
    task asking VERDICT: TRUE or FALSE about the files its panel's prompt carried (frozen as fixtures).
    Reads GET /api/suite/claims; writes here. A task that exists is left alone.

    Example:

    \b
      bench suite mine
    """
    target = out if out is not None else UpSettings().home / "suite" / "tasks"
    s = session(ctx)
    with s.client() as client:
        reply = client.get(f"/api/suite/claims?{urlencode({'limit': limit})}")
    rows = (reply.data or {}).get("rows") or []
    judged = [Judged(r["call"], r["alias"], r["prompt"], list(r.get("real") or []),
                     list(r.get("false") or [])) for r in rows]
    drafts = [m for j in judged for m in mined(j)]
    written, kept = write_tasks([(m.task, m.fixtures) for m in drafts], target)
    for task_id in written:
        stdout.print(task_id, markup=False)
    if kept:
        say(f"{len(kept)} already there, left alone")
    say(f"{len(written)} drafts written to {target}" if written else "no drafts written")


@app.command("rescore")
def rescore(ctx: typer.Context) -> None:
    """Score every model's latest answer per task again with today's tasks and scorer (POST
    /api/suite/rescore), from the answers the stream keeps: after a task file or the scoring rules change.
    Lists each score that changed.

    Example:

    \b
      bench suite rescore
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/suite/rescore", {})

    def human(data: Any) -> None:
        changed = data.get("changed") or []
        show(rows_table("scores that changed", ["alias", "task", "before", "after"], changed))
        say(f"{len(changed)} scores changed")

    s.emit(reply, human)

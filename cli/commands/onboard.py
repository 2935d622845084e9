"""`bench onboard …`, `bench candidates`, `bench dismiss` (SPEC O-1..O-4): models join the bench through the
probers' queue, one at a time (list, register, facts, probe, suite). `--wait` draws the queue's progress as
the server streams it (`GET /api/onboard-queue/events`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from cli.errors import Refused, UsageProblem
from cli.output import rows_table, say, show, stderr
from cli.session import Session, session
from shared.onboarding import STEPS

ACTIONS = ("status", "stop", "clear")
STEP_NAMES = {0: "waiting", 1: "listing", 2: "register", 3: "facts", 4: "probe", 5: "suite"}
ITEM_COLUMNS = ("served", "endpoint", "mode", "state", "step", "alias", "note")


def mode_of(quick: bool, ad_hoc: bool) -> str:
    """O-2: `--ad-hoc` only with `--quick`."""
    if ad_hoc and not quick:
        raise UsageProblem("--ad-hoc goes with --quick (quick + ad hoc: probe only, never called on its own)")
    return "quick-adhoc" if ad_hoc else "quick" if quick else "full"


def show_queue(data: Any) -> None:
    items = data.get("items") or []
    state = "stopping" if data.get("stopping") else "running" if data.get("running") else "idle"
    say(f"onboarding queue: {state}" + (f" on {data['runner']}" if data.get("runner") else ""))
    if items:
        show(rows_table("onboarding", ITEM_COLUMNS, items))
    issues = data.get("issues") or []
    if issues:
        show(rows_table("onboard stopped", ("at", "served", "endpoint", "alias", "step", "failure", "detail"),
                        issues))


def onboard(
    ctx: typer.Context,
    served: Annotated[list[str], typer.Argument(
        help="Served ids to onboard (as the endpoint lists them); or one of status, stop, clear.")],
    endpoint: Annotated[str | None, typer.Option(help="The endpoint serving them.")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Probe only; scheduled suite passes fill in.")] = (
        False
    ),
    ad_hoc: Annotated[bool, typer.Option("--ad-hoc", help="With --quick: ad hoc, never called alone.")] = (
        False
    ),
    wait: Annotated[bool, typer.Option("--wait", help="Draw the queue's progress until it is done.")] = False,
) -> None:
    """Onboard models one at a time (POST /api/onboard-queue): the endpoint must list each; it is registered,
    probed, then (full mode) run through the suite. The batch is refused whole if any one is refused.

    `bench onboard status` shows the queue, `stop` skips what waits, `clear` forgets a finished batch.

    Example:

    \b
      bench onboard meta-llama/llama-3.3-70b-instruct:free --endpoint openrouter --quick --wait
      bench onboard status
    """
    s = session(ctx)
    if len(served) == 1 and served[0] in ACTIONS:
        action = served[0]
        with s.client() as client:
            reply = (client.get("/api/onboard-queue") if action == "status"
                     else client.post(f"/api/onboard-queue/{action}", {}))
        s.emit(reply, show_queue)
        if wait and action == "status":
            watch(s)
        return
    if endpoint is None:
        raise UsageProblem("name the endpoint serving them: --endpoint NAME")
    mode = mode_of(quick, ad_hoc)
    items = [{"served": one, "endpoint": endpoint, "mode": mode} for one in served]
    with s.client() as client:
        reply = client.post("/api/onboard-queue", {"items": items})
    s.emit(reply, show_queue)
    if wait:
        watch(s)


def sse_events(lines: Iterable[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event name, data) of each server-sent event."""
    kind, data = "message", ""
    for line in lines:
        if line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            yield kind, json.loads(data)
            kind, data = "message", ""


class Board:
    """One progress bar per item (steps 0..5), moved by the queue's progress events."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def line(self, row: dict[str, Any]) -> str:
        state, step = row.get("state", ""), int(row.get("step") or 0)
        what = STEP_NAMES.get(step, "") if state == "running" else state
        note = f" ({row['note']})" if row.get("note") and state != "running" else ""
        return f"{row.get('served', '')}: {what}{note}"

    def update(self, item: str, row: dict[str, Any]) -> None:
        finished = row.get("state") not in ("queued", "running")
        done = STEPS if finished else max(0, int(row.get("step") or 0) - 1)
        if item not in self.tasks:
            self.tasks[item] = self.progress.add_task(self.line(row), total=STEPS)
        self.progress.update(self.tasks[item], completed=done, description=self.line(row))

    def feed(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "queue":
            for row in data.get("items") or []:
                self.update(row["id"], row)
        elif kind == "progress":
            self.update(data["item"], data)


def watch(s: Session) -> None:
    """Draw the queue until nothing is queued or running; Ctrl-C stops watching, not the queue."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    last: dict[str, Any] = {}
    with Progress(*columns, console=stderr, transient=False) as progress, s.client() as client:
        board = Board(progress)
        for kind, data in sse_events(client.stream_lines("/api/onboard-queue/events", None, "GET")):
            board.feed(kind, data)
            if kind == "progress":
                last[data["item"]] = data
    failed = [e for e in last.values() if e.get("state") in ("failed", "no answer")]
    if failed:
        raise Refused(*(f"{e['served']}: {e['state']}: {e.get('note', '')}" for e in failed))


def candidates(
    ctx: typer.Context,
    new: Annotated[bool, typer.Option("--new", help="Only those new since the last look.")] = False,
) -> None:
    """Served models not on the bench yet, from every endpoint's listing now (GET /api/candidates).

    Example:

    \b
      bench candidates --new
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/candidates")

    def human(data: Any) -> None:
        rows = [c for c in data.get("candidates") or [] if c.get("new") or not new]
        show(rows_table("candidates", ("key", "served", "endpoint", "new"), rows))
        for error in data.get("errors") or []:
            say(f"bench: {error}")
        hidden = len(data.get("dismissed") or [])
        if hidden:
            say(f"{hidden} dismissed (bench dismiss --undo KEY shows one again)")

    s.emit(reply, human)


def dismiss(
    ctx: typer.Context,
    keys: Annotated[list[str], typer.Argument(help="Candidate keys: served, or served@endpoint.")],
    undo: Annotated[bool, typer.Option("--undo", help="Show them as candidates again.")] = False,
) -> None:
    """Hide candidates you do not want (POST /api/dismiss).

    Example:

    \b
      bench dismiss some/model:free
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/dismiss", {"served": keys, "undo": undo})
    s.emit(reply, lambda data: say(f"{'restored' if undo else 'dismissed'} {len(keys)}"))

"""`bench ask`: a question to a collection, answered by every seat (POST /v1/chat/completions)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from cli.asking import Progress, prompt_text, request_body
from cli.errors import Refused, UsageProblem
from cli.output import stderr, stdin_is_terminal
from cli.session import Session, session

PATH = "/v1/chat/completions"


def seats_table(bench: dict[str, Any]) -> Table:
    table = Table(title=f"{bench.get('panel', '')} · {bench.get('collection', '')}", title_justify="left")
    for column in ("call", "seat", "alias", "status", "seconds"):
        table.add_column(column)
    seats = list(bench.get("seats") or [])
    if isinstance(bench.get("merger"), dict):
        seats.append(bench["merger"])
    for seat in seats:
        table.add_row(*(Text(str(seat.get(c, ""))) for c in ("call", "seat", "alias", "status", "seconds")))
    return table


class Ticker:
    """The live progress line on stderr (a terminal only), redrawn every half second."""

    def __init__(self, progress: Progress, collection: str) -> None:
        self.progress, self.collection = progress, collection
        self.start = time.monotonic()
        self.stop = threading.Event()
        self.live = sys.stderr.isatty()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self) -> Ticker:
        if self.live:
            self.thread.start()
        return self

    def run(self) -> None:
        while not self.stop.wait(0.5):
            self.draw()

    def draw(self) -> None:
        line = self.progress.line(self.collection, time.monotonic() - self.start)
        sys.stderr.write(f"\r{line}\x1b[K")
        sys.stderr.flush()

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        if self.live:
            self.thread.join()
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def streamed(s: Session, body: dict[str, Any], collection: str) -> Progress:
    progress = Progress()
    with s.client() as client, Ticker(progress, collection):
        for line in client.stream_lines(PATH, body):
            progress.feed(line)
            if progress.error:
                raise Refused(progress.error)
    if not progress.done:
        raise Refused("the answer stream ended early")
    return progress


def ask(
    ctx: typer.Context,
    collection: Annotated[str, typer.Argument(help="The collection, e.g. core or bench/core.")],
    prompt: Annotated[list[str] | None, typer.Argument(help="The question; '-' reads it from stdin.")] = None,
    file: Annotated[list[Path] | None, typer.Option("--file", "-f", help="A file to append; repeatable.",
                                                    exists=True, dir_okay=False, readable=True)] = None,
    system: Annotated[str | None, typer.Option(help="A system message.")] = None,
    merged: Annotated[
        bool | None,
        typer.Option("--merged/--all", help="One merged answer, or every answer.", show_default=False),
    ] = None,
    with_: Annotated[
        list[str] | None, typer.Option("--with", help="Seat this model as an explorer; repeatable.")
    ] = None,
) -> None:
    """Ask a collection: answers on stdout, the seats table on stderr.

    Piped stdin is added to the words (so a diff can be reviewed with a question); each --file is appended
    as a fenced block. Uses BENCHWARMERS_KEY when the gateway needs keys.

    Example:

    \b
      git diff | bench ask core "review this change" -f notes.md
    """
    s = session(ctx)
    piped = None if stdin_is_terminal() else sys.stdin.read()
    files = [(str(path), path.read_text(errors="replace")) for path in file or []]
    text = prompt_text(list(prompt or []), piped, files)
    if not text:
        raise UsageProblem("nothing to ask: give the question as words, or pipe it in")
    reply = None if merged is None else ("merged" if merged else "all")
    name = collection if collection.startswith("bench/") else f"bench/{collection}"
    nominees = list(with_ or [])
    if s.json:
        with s.client() as client:
            answer = client.post(PATH, request_body(collection, text, system, reply, nominees, False))
        s.emit(answer, lambda data: None)
        return
    progress = streamed(s, request_body(collection, text, system, reply, nominees, True), name)
    typer.echo(progress.content)
    if progress.bench:
        stderr.print(seats_table(progress.bench))
        stderr.print("bench: judge each seat: bench verdict <call> --useful | --not-useful", markup=False)

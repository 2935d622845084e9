"""`bench verdict` and `bench pending`: say whether a seat's answer helped (POST /bench/verdict), and which
seats still wait for a verdict (POST /bench/pending)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.errors import UsageProblem
from cli.output import stdout
from cli.session import session


def verdict(
    ctx: typer.Context,
    call: Annotated[str, typer.Argument(help="The seat's call id, e.g. p20260105-093000-1a2b.member1.")],
    useful: Annotated[
        bool | None, typer.Option("--useful/--not-useful", help="Did the answer help?", show_default=False)
    ] = None,
    note: Annotated[str | None, typer.Option(help="Why, in a few words.")] = None,
    real: Annotated[
        list[str] | None, typer.Option("--real", help="A claim you checked true; repeatable.")
    ] = None,
    false: Annotated[
        list[str] | None, typer.Option("--false", help="A claim you checked untrue; repeatable.")
    ] = None,
) -> None:
    """Record a verdict on one seat's answer.

    Example:

    \b
      bench verdict p20260105-093000-1a2b.member1 --useful --note "found the bug" --real "off by one"
    """
    if useful is None:
        raise UsageProblem("say --useful or --not-useful")
    body: dict[str, Any] = {"call": call, "useful": useful}
    if note is not None:
        body["note"] = note
    if real:
        body["real"] = real
    if false:
        body["false"] = false
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/bench/verdict", body)
    s.emit(reply, lambda data: stdout.print(f"recorded {call}: {'useful' if useful else 'not useful'}",
                                            markup=False))


def pending(
    ctx: typer.Context,
    calls: Annotated[list[str], typer.Argument(help="Seat call ids to check.")],
) -> None:
    """List the given seats that still have no verdict (errored seats never wait).

    Example:

    \b
      bench pending p20260105-093000-1a2b.member1 p20260105-093000-1a2b.explorer
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/bench/pending", {"calls": calls})

    def human(data: Any) -> None:
        for call in data.get("pending") or []:
            stdout.print(call, markup=False)

    s.emit(reply, human)

"""`bench settings …`: the gateway's settings (SPEC C-11)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import record_table, show
from cli.session import session

app = noun_app("Settings of the gateway.")


@app.command("gateway")
def gateway(
    ctx: typer.Context,
    max_calls: Annotated[int | None, typer.Option(help="Seats per panel, 1..10.")] = None,
    max_explorers: Annotated[int | None, typer.Option(help="Explorer seats, 0..2.")] = None,
) -> None:
    """Show, or change, how many seats a panel has (POST /api/gateway-settings).

    Example:

    \b
      bench settings gateway --max-calls 6 --max-explorers 2
    """
    body: dict[str, Any] = {}
    if max_calls is not None:
        body["max_calls"] = max_calls
    if max_explorers is not None:
        body["max_explorers"] = max_explorers
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/gateway-settings", body) if body else client.get("/api/collections")
    s.emit(reply, lambda data: show(record_table("gateway settings", data.get("settings") or {})))


def job_list(values: list[str] | None) -> list[str]:
    """`--off perf --off suite` and `--off perf,suite` alike."""
    return [name.strip() for value in values or [] for name in value.split(",") if name.strip()]


@app.command("scheduler")
def scheduler(
    ctx: typer.Context,
    mode: Annotated[str | None, typer.Argument(help="off, log-only or run; left out: show them.")] = None,
    off: Annotated[list[str] | None, typer.Option(help="Switch these jobs off (repeat, or a list).")] = None,
    on: Annotated[list[str] | None, typer.Option(help="Switch these jobs back on.")] = None,
) -> None:
    """Show, or set, when the prober runs its jobs (SPEC HL-7; POST /api/scheduler).

    Jobs: availability, catalog, suite-free, deprecations, perf, capabilities, suite. The server refuses
    an unknown mode or job and lists the valid ones.

    Example:

    \b
      bench settings scheduler run --off perf
    """
    body: dict[str, Any] = {}
    if mode is not None:
        body["mode"] = mode
    if off:
        body["off"] = job_list(off)
    if on:
        body["on"] = job_list(on)
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/scheduler", body) if body else client.get("/api/scheduler")

    def human(data: Any) -> None:
        view = data.get("scheduler") or {}
        jobs = view.get("jobs") or {}
        show(record_table("scheduler", {"mode": view.get("mode"), "source": view.get("source"),
                                        "since": view.get("since"),
                                        **{job: "on" if on_ else "off" for job, on_ in jobs.items()}}))

    s.emit(reply, human)

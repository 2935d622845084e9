"""The four MCP tools (MCP-3), run inside the gateway on the request that carried the call: `ask` puts the
prompt to the gateway's own panel runner (no HTTP call to itself) after the caller's key scope and rpm cap
(`admit`), reporting progress as seats land; `verdict` and `pending_verdicts` ask the ledger. Any refusal
becomes an `isError` result in MCP-2's words."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import structlog
from starlette.requests import Request

from services.gateway.context import GatewayContext
from services.gateway.keys.admit import admit, visible
from services.gateway.listing import model_rows
from services.gateway.mcp.memory import ReminderMemory
from services.gateway.mcp.reminders import latest, pending_args, reminder_output
from services.gateway.mcp.results import (
    Outcome,
    ask_args,
    ask_of,
    ask_outcome,
    collections_text,
    landed_message,
    refused,
    seated_message,
    tick_progress,
    verdict_text,
    waiting_message,
)
from services.gateway.panel.present import PRESENTERS
from services.gateway.panel.progress import Failed, Finished, Landed, Seated, Update
from services.gateway.panel.runner import PanelRun
from shared import subjects
from shared.access import caller_of
from shared.commands import PendingReply, PendingRequest, VerdictReply
from shared.events import SeatCompleted, SeatPlan
from shared.ledger_api import verdict_request
from shared.refusal import Refusal
from shared.transcripts import transcript_calls

log = structlog.get_logger("gateway.mcp")

Progress = Callable[[float, float | None, str], Awaitable[None]]
Tool = Callable[[Request, Mapping[str, Any], Progress], Awaitable[Outcome]]


def context(request: Request) -> GatewayContext:
    ctx: GatewayContext = request.app.state.ctx
    return ctx


async def list_collections(request: Request, args: Mapping[str, Any], progress: Progress) -> Outcome:
    rows = visible(model_rows(context(request).config), request)
    return Outcome([collections_text(rows)])


async def ask(request: Request, args: Mapping[str, Any], progress: Progress) -> Outcome:
    ctx = context(request)
    asked = ask_args(args)
    canonical = ask_of(asked, caller_of(request).name)
    resolved = await ctx.resolve(canonical)
    await admit(request, resolved)  # P-1 (6) key scope → 403, (7) key rpm → 429
    if resolved.mode == "route":  # a collection saved for route mode is asked as a panel here
        resolved = replace(resolved, mode="all")
    presenter = PRESENTERS[resolved.panel_mode]()
    run = ctx.panels.start(canonical, resolved)
    seats: list[SeatPlan] = []
    landed: list[tuple[SeatPlan, SeatCompleted]] = []
    ticks, started = 0, asyncio.get_running_loop().time()
    async for update in ticking(run, ctx.settings.keepalive_s):
        if update is None:  # a keep-alive period without news: say who is still awaited
            ticks += 1
            waiting = [seat for seat in seats if seat.call not in {s.call for s, _ in landed}]
            elapsed = asyncio.get_running_loop().time() - started
            await tell(progress, tick_progress(len(landed), ticks), len(seats),
                       waiting_message(waiting, len(seats), elapsed))
        elif isinstance(update, Seated):
            seats = list(update.plan.seats)
            await tell(progress, 0, len(seats), seated_message(seats, update.plan.panel))
        elif isinstance(update, Landed):
            landed.append((update.seat, update.done))
            ticks = 0
            await tell(progress, len(landed), len(seats), landed_message(landed, len(seats)))
        elif isinstance(update, Finished):
            answer = presenter.answer(update)
            return ask_outcome(answer.content, answer.bench, resolved.panel_mode == "merged")
        elif isinstance(update, Failed):
            raise Refusal(update.status, update.message)
    raise Refusal(500, "the panel ended without an answer")


async def ticking(run: PanelRun, every_s: float) -> AsyncIterator[Update | None]:
    """The panel's updates, with None after each `every_s` without one (MCP-4's keep-alive), until it ends."""
    while True:
        try:
            update = await asyncio.wait_for(run.next(), every_s)
        except TimeoutError:
            yield None
            continue
        yield update
        if isinstance(update, Finished | Failed):
            return


async def tell(progress: Progress, done: float, total: int, message: str) -> None:
    """A progress notification; a client gone meanwhile costs the panel nothing (it runs to its end)."""
    try:
        await progress(done, total, message)
    except Exception as exc:
        log.info("mcp_progress_not_sent", error=f"{type(exc).__name__}: {exc}"[:200])


async def verdict(request: Request, args: Mapping[str, Any], progress: Progress) -> Outcome:
    asked = verdict_request(dict(args), caller_of(request).name)
    structlog.contextvars.bind_contextvars(call=asked.call)
    await context(request).ask_ledger(subjects.RPC_LEDGER_VERDICT, asked, VerdictReply)
    return Outcome([verdict_text(asked.call, asked.useful, asked.real, asked.false_claims)])


async def pending_verdicts(request: Request, args: Mapping[str, Any], progress: Progress) -> Outcome:
    """Empty text unless a seat named in the session is owed a verdict and was not yet reminded of."""
    pending = pending_args(args)
    if pending is None:
        return Outcome([""])
    calls = pending.calls
    if calls is None:  # read here only what a Stop hook may read (`shared.transcripts`)
        calls = latest(await asyncio.to_thread(transcript_calls, pending.transcript))
    if not calls:
        return Outcome([""])
    ctx = context(request)
    owed = await ctx.ask_ledger(subjects.RPC_LEDGER_PENDING, PendingRequest(calls=calls), PendingReply)
    fresh = await ReminderMemory(ctx.js).first_time(pending.session, owed.pending)
    return Outcome([reminder_output(fresh)])


HANDLERS: dict[str, Tool] = {
    "list_collections": list_collections, "ask": ask, "verdict": verdict,
    "pending_verdicts": pending_verdicts,
}


async def call(request: Request, name: str, args: Mapping[str, Any], progress: Progress) -> Outcome:
    """Run the tool `name` (a known one); its refusals are results with `isError`, never protocol errors."""
    try:
        return await HANDLERS[name](request, args, progress)
    except Refusal as refusal:
        return refused(name, refusal.status, refusal.message)

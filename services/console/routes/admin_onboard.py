"""Onboarding on the admin API (O-1..O-4; H-D2 /api/onboard-queue, /api/candidates; H-D3 /api/onboard,
/api/onboard-queue, /stop, /clear, /api/dismiss). The probers keep the queue (`bench.rpc.prober.onboard`);
the gateway only asks, and streams the queue's progress events to a watching client
(`/api/onboard-queue/events`, what `bench onboard --wait` draws)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import nats.errors
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from services.console.admin.onboard_schemas import (
    DismissBody,
    OnboardBody,
    OnboardQueueBody,
    OnboardReplyBody,
)
from services.console.admin.schemas import REFUSALS
from services.console.context import context
from services.console.routes.admin_base import AdminRoute
from shared import bus_calls, rpc, subjects
from shared.config_rules.base import Conflict, Invalid, Missing
from shared.events import OnboardProgress, decode_event
from shared.onboarding import OnboardAsk, OnboardReply, OnboardRequest
from shared.refusal import Refusal
from shared.streaming import LeanStreamingResponse

router = APIRouter(route_class=AdminRoute, tags=["onboarding"])

# Queuing asks each endpoint for its model list first (through a caller).
ONBOARD_TIMEOUT_S = 120.0
STATUS_TIMEOUT_S = 1.0
KEEPALIVE_S = 10.0
IDLE_CHECK_S = 30.0  # a watch that heard nothing this long asks whether the queue is still busy
# A prober's refusal, one reason a line, keeps its status: 404 nothing named exists, 409 in the way, 400.
REASONS: dict[int, type[str]] = {400: str, 404: Missing, 409: Conflict}


async def ask(request: Request, req: OnboardRequest, timeout: float = ONBOARD_TIMEOUT_S) -> dict[str, Any]:
    ctx = context(request)
    req = req.model_copy(update={"config_seq": ctx.config.seq})
    try:
        reply = await rpc.call(ctx.nc, subjects.RPC_PROBER_ONBOARD, req, OnboardReply, timeout)
    except rpc.RpcFailure as failure:
        if failure.answered and failure.status in REASONS:
            kind = REASONS[failure.status]
            raise Invalid([kind(line) for line in failure.message.splitlines()]) from None
        raise bus_calls.refusal(subjects.RPC_PROBER_ONBOARD, failure, timeout) from None
    return {**reply.model_dump(mode="json"), "ok": True}


async def summary(request: Request) -> dict[str, Any]:
    """H-D2 `/api/status`'s `onboarding`: whether a model is being onboarded and how many items the queue
    holds; a prober that does not answer at once shows as idle rather than slowing the status down."""
    ctx = context(request)
    try:
        reply = await rpc.call(ctx.nc, subjects.RPC_PROBER_ONBOARD, OnboardRequest(action="status"),
                               OnboardReply, STATUS_TIMEOUT_S, retry_s=())
    except rpc.RpcFailure:
        return {"running": False, "items": 0}
    return {"running": reply.running, "items": len(reply.items)}


@router.get("/api/onboard-queue", response_model=OnboardReplyBody, responses=REFUSALS)
async def queue_view(request: Request) -> dict[str, Any]:
    """The queue: running, stopping, each item's state and step, and the issues of models that stopped."""
    return await ask(request, OnboardRequest(action="status"))


@router.post("/api/onboard-queue", response_model=OnboardReplyBody, responses=REFUSALS)
async def queue(body: OnboardQueueBody, request: Request) -> dict[str, Any]:
    """Queue 1..50 models (refused as a whole if any one would be refused); they run one at a time."""
    items = [OnboardAsk(**item.model_dump()) for item in body.items]
    return await ask(request, OnboardRequest(action="queue", items=items))


@router.post("/api/onboard", response_model=OnboardReplyBody, responses=REFUSALS)
async def onboard_one(body: OnboardBody, request: Request) -> dict[str, Any]:
    """Queue one model (it starts now when the queue is idle)."""
    return await ask(request, OnboardRequest(action="queue", items=[OnboardAsk(**body.model_dump())]))


@router.post("/api/onboard-queue/stop", response_model=OnboardReplyBody, responses=REFUSALS)
async def stop(request: Request) -> dict[str, Any]:
    """Skip the queued items now; the running one finishes."""
    return await ask(request, OnboardRequest(action="stop"))


@router.post("/api/onboard-queue/clear", response_model=OnboardReplyBody, responses=REFUSALS)
async def clear(request: Request) -> dict[str, Any]:
    """Forget a finished batch (409 while one runs)."""
    return await ask(request, OnboardRequest(action="clear"))


@router.get("/api/candidates", response_model=OnboardReplyBody, responses=REFUSALS)
async def candidates(request: Request) -> dict[str, Any]:
    """Served models not on the bench, from every endpoint's listing now; `new` since the last look."""
    return await ask(request, OnboardRequest(action="candidates"))


@router.post("/api/dismiss", response_model=OnboardReplyBody, responses=REFUSALS)
async def dismiss(body: DismissBody, request: Request) -> dict[str, Any]:
    """Hide candidates (`served`, or `served@endpoint` off the default endpoint); `undo` shows them again."""
    keys = [body.served] if isinstance(body.served, str) else body.served
    return await ask(request, OnboardRequest(action="dismiss", keys=keys, undo=body.undo))


async def still_busy(request: Request) -> bool:
    """Whether anything is queued or running; a prober that cannot say ends the watch (the client may ask
    again) rather than breaking the stream mid-event."""
    try:
        now = await ask(request, OnboardRequest(action="status"))
    except (Invalid, Refusal):
        return False
    return any(i["state"] in ("queued", "running") for i in now["items"])


def sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, default=str)}\n\n".encode()


STREAM_REPLY: dict[int | str, dict[str, Any]] = {
    **REFUSALS, 200: {"content": {"text/event-stream": {}}, "description": "the queue's progress"}}


@router.get("/api/onboard-queue/events", responses=STREAM_REPLY, response_class=Response)
async def events(request: Request) -> Response:
    """The queue as it is (`event: queue`), then every item's progress as it happens (`event: progress`,
    the `onboard_progress` event); the stream ends when nothing is queued or running."""
    ctx = context(request)
    sub = await ctx.nc.subscribe(f"{subjects.ONBOARD_PREFIX}.>")
    try:
        first = await ask(request, OnboardRequest(action="status"))
    except BaseException:
        await sub.unsubscribe()
        raise

    async def body() -> AsyncIterator[bytes]:
        try:
            yield sse("queue", first)
            busy = any(i["state"] in ("queued", "running") for i in first["items"])
            quiet = 0.0
            while busy:
                try:
                    msg = await sub.next_msg(timeout=KEEPALIVE_S)
                except nats.errors.TimeoutError:
                    quiet += KEEPALIVE_S
                    yield b": keep-alive\n\n"
                    if quiet >= IDLE_CHECK_S:
                        quiet = 0.0
                        busy = await still_busy(request)
                    continue
                quiet = 0.0
                event = decode_event(msg.data)
                if isinstance(event, OnboardProgress):
                    yield sse("progress", event.model_dump(mode="json"))
                    busy = event.remaining > 0
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    return LeanStreamingResponse(body(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

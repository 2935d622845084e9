"""`bench/<c>:route` over HTTP (RM-1, RM-6, RM-8): one member's answer in the request's own format.

Not streamed: the whole reply once the turn is over, or its error status. Streamed: the 200 waits up to the
grace (15 s) for the first piece, so a turn that fails everywhere by then keeps its status (429 / 502);
after it, the live member's chunks as they pass, a keep-alive after every stretch of silence (the first
right after a grace 200), and the end, or the format's error if the turn broke. `X-Bench-Conversation`
rides on every reply; `X-Bench-Model` once the member is known by the time of the 200.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import structlog
from starlette.responses import JSONResponse, Response

from services.gateway.ask import Ask, Refusal
from services.gateway.context import GatewayContext
from services.gateway.deliver import error_response
from services.gateway.formats.base import Format
from services.gateway.panel.resolve import Resolved
from services.gateway.route_mode.bench import CONVERSATION_HEADER, route_headers
from services.gateway.route_mode.encoders import RouteEncoder, context_for, route_encoder
from services.gateway.route_mode.plan import Broke, Done, Pieces, TurnRun, TurnUpdate
from services.gateway.route_mode.transport import AS_SENT, AsSent, transport_for
from services.gateway.streaming import LeanStreamingResponse


async def answer_route(ctx: GatewayContext, fmt: Format, ask: Ask, resolved: Resolved) -> Response:
    transport = transport_for(ctx)
    sent = AS_SENT.get() or AsSent({})
    try:
        plan = await transport.prepare(ask, resolved, sent)
    except Refusal as refusal:
        return error_response(fmt, refusal.status, refusal.message)
    conversation = plan.conversation.id
    structlog.contextvars.bind_contextvars(conversation=conversation)
    run = transport.start(plan)
    encoder = route_encoder(context_for(ask, resolved.canonical, sent.body))
    if not ask.stream:
        return await answer_whole(fmt, encoder, run, conversation)
    first: TurnUpdate | None
    try:  # a timeout scope, not `wait_for`: no task of its own on the way to the first byte
        async with asyncio.timeout(ctx.settings.route_grace_s):
            first = await run.next()
    except TimeoutError:
        first = None
    if isinstance(first, Broke):
        return failed(fmt, first, conversation)
    alias = first.alias if isinstance(first, Pieces | Done) else None
    headers = {"Cache-Control": "no-cache", **route_headers(conversation, alias)}
    stream = stream_turn(encoder, run, first, ctx.settings.keepalive_s)
    return LeanStreamingResponse(stream, media_type=encoder.media_type, headers=headers)


def failed(fmt: Format, broke: Broke, conversation: str) -> Response:
    response = error_response(fmt, broke.status, broke.message)
    response.headers[CONVERSATION_HEADER] = conversation
    return response


async def answer_whole(fmt: Format, encoder: RouteEncoder, run: TurnRun, conversation: str) -> Response:
    while True:
        update = await run.next()
        if isinstance(update, Done):
            reply = encoder.reply(update.summary, update.bench)
            return JSONResponse(reply.body, headers=reply.headers)
        if isinstance(update, Broke):
            return failed(fmt, update, conversation)


async def stream_turn(
    encoder: RouteEncoder, run: TurnRun, first: TurnUpdate | None, keepalive_s: float
) -> AsyncIterator[bytes]:
    """The stream after its 200; `first` is what arrived before it (None after a grace 200). Silence is
    counted on the wire: held-back chunks write nothing, so they do not count as something said."""
    loop = asyncio.get_running_loop()
    head = encoder.start()  # sent with what follows it, in one write
    if first is None:
        yield head + encoder.keepalive()
        head = b""
    wrote, update = loop.time(), first
    while True:
        if update is None:
            try:
                update = await run.next_within(keepalive_s - (loop.time() - wrote))
            except TimeoutError:
                yield head + encoder.keepalive()
                wrote, head = loop.time(), b""
                continue
        if isinstance(update, Pieces):
            # Pieces already queued behind this one go out in the same write: one send, not one a chunk.
            parts: list[bytes] = []
            while isinstance(update, Pieces):
                parts += [encoder.chunk(chunk) for chunk in update.chunks]
                update = run.take_nowait()
            out = head + b"".join(parts)
            if out:
                yield out
                wrote, head = loop.time(), b""
            continue
        if isinstance(update, Done):
            yield head + encoder.finish(update.summary, update.bench)
        else:
            yield head + encoder.error(update.status, update.message)
        return

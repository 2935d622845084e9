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

from services.gateway.ask import Ask
from services.gateway.deliver import error_response
from services.gateway.formats.base import Format
from services.gateway.formats.route_encoder import RouteContext, RouteEncoder
from services.gateway.panel.resolve import Resolved
from services.gateway.route_mode.bench import CONVERSATION_HEADER, route_headers
from services.gateway.route_mode.conversation import canonical_collection
from services.gateway.route_mode.desk import RouteDesk
from services.gateway.route_mode.needs import request_estimate
from services.gateway.route_mode.prepared import Done, Failed, Pieces, TurnRun, TurnUpdate
from shared.refusal import Refusal
from shared.settings import GatewaySettings
from shared.streaming import Last, LeanStreamingResponse


class RouteReplies:
    """The `route` reply mode: a turn on one member, relayed in the request's format."""

    def __init__(self, desk: RouteDesk, settings: GatewaySettings) -> None:
        self.desk, self.settings = desk, settings

    async def answer(self, fmt: Format, ask: Ask, resolved: Resolved) -> Response:
        try:
            turn = await self.desk.prepare(ask, resolved)
        except Refusal as refusal:
            return error_response(fmt, refusal.status, refusal.message)
        conversation = turn.conversation.id
        structlog.contextvars.bind_contextvars(conversation=conversation)
        run = self.desk.start(turn)
        encoder = fmt.route_encoder(context_for(ask, resolved.canonical, turn.estimate))
        if not ask.stream:
            return await answer_whole(fmt, encoder, run, conversation)
        first: TurnUpdate | None
        try:  # a timeout scope, not `wait_for`: no task of its own on the way to the first byte
            async with asyncio.timeout(self.settings.route_grace_s):
                first = await run.next()
        except TimeoutError:
            first = None
        if isinstance(first, Failed):
            return failed(fmt, first, conversation)
        alias = first.alias if isinstance(first, Pieces | Done) else None
        headers = {"Cache-Control": "no-cache", **route_headers(conversation, alias), **encoder.headers()}
        stream = stream_turn(encoder, run, first, self.settings.keepalive_s)
        return LeanStreamingResponse(stream, media_type=encoder.media_type, headers=headers)

    async def close(self) -> None:
        """Requests in flight were drained by the server first; what is left runs for clients that hung up."""
        await self.desk.close(grace_s=5.0)


def context_for(ask: Ask, collection: str, estimate: int | None = None) -> RouteContext:
    """What an encoder needs of a parsed request; `estimate` when the turn already measured it."""
    if estimate is None:
        estimate = request_estimate(ask.messages, ask.route_fields)
    return RouteContext(
        format=ask.format, collection=canonical_collection(collection), model=ask.asked_model or ask.model,
        input_estimate=estimate, custom_tools=ask.custom_tools,
        namespaced_tools=ask.namespaced_tools, dropped_tools=ask.dropped_tools,
        dropped_items=ask.dropped_items,
        event_stream=ask.event_stream, received_ns=ask.received_ns,
    )


def failed(fmt: Format, failure: Failed, conversation: str) -> Response:
    response = error_response(fmt, failure.status, failure.message)
    response.headers[CONVERSATION_HEADER] = conversation
    return response


async def answer_whole(fmt: Format, encoder: RouteEncoder, run: TurnRun, conversation: str) -> Response:
    while True:
        update = await run.next()
        if isinstance(update, Done):
            reply = encoder.reply(update.summary, update.bench)
            return JSONResponse(reply.body, headers=reply.headers)
        if isinstance(update, Failed):
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
            # Pieces already queued behind this one go out in the same write: one send, not one a chunk;
            # the end too, when it is queued already (the last pieces and the end came in one frame).
            parts: list[bytes] = []
            while isinstance(update, Pieces):
                parts += [encoder.chunk(chunk) for chunk in update.chunks]
                update = run.take_nowait()
            head += b"".join(parts)
            if update is None:
                if head:
                    yield head
                    wrote, head = loop.time(), b""
                continue
        if isinstance(update, Done):
            yield Last(head + encoder.finish(update.summary, update.bench))
        else:
            yield Last(head + encoder.error(update.status, update.message))
        return

"""Answering a running panel over HTTP in the client's format: whole (plain) or piece by piece (streamed).

Streaming (S-2, S-3): the 200 goes out once the panel is seated or after `stream_grace_s`, whichever comes
first; a refusal known before then keeps its status and the format's error body. After the 200 the stream
carries the pieces, a keep-alive after every `keepalive_s` of silence (the first one right after a grace
200), and an error, if one comes, in the format's stream form.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import structlog
from starlette.responses import JSONResponse, Response

from services.gateway.ask import Ask
from services.gateway.formats.base import Format, StreamEncoder
from services.gateway.panel.present import PRESENTERS, Presenter
from services.gateway.panel.progress import Failed, Finished, Landed, Seated, Update
from services.gateway.panel.resolve import Resolved
from services.gateway.panel.runner import PanelRun, PanelRunner
from services.gateway.updates import Updates
from shared.settings import GatewaySettings
from shared.streaming import Last, LeanStreamingResponse


class PanelReplies:
    """The `all` and `merged` reply modes (P-2..P-15): every seat's answer side by side, or merged into one,
    each with its presenter."""

    def __init__(self, panels: PanelRunner, settings: GatewaySettings) -> None:
        self.panels, self.settings = panels, settings

    async def answer(self, fmt: Format, ask: Ask, resolved: Resolved) -> Response:
        presenter = PRESENTERS[resolved.panel_mode]()
        run = self.panels.start(ask, resolved)
        if ask.stream:
            return await answer_streamed(fmt, ask, resolved.canonical, run, presenter,
                                         self.settings.stream_grace_s, self.settings.keepalive_s)
        return await answer_whole(fmt, ask, run, presenter)

    async def close(self) -> None:
        """Requests in flight were drained by the server first; what is left runs for clients that hung up."""
        await self.panels.close()


def error_response(fmt: Format, status: int, message: str) -> JSONResponse:
    return JSONResponse(fmt.error_body(status, message), status_code=status)


def bind_panel(update: Update | None) -> None:
    """The request's log lines (the access line too) carry the panel id once it has one."""
    if isinstance(update, Seated):
        structlog.contextvars.bind_contextvars(panel=update.plan.panel)


async def answer_whole(fmt: Format, ask: Ask, run: PanelRun, presenter: Presenter) -> Response:
    async for update in run.updates():
        bind_panel(update)
        if isinstance(update, Failed):
            return error_response(fmt, update.status, update.message)
        if isinstance(update, Finished):
            reply = fmt.reply(ask, presenter.answer(update))
            return JSONResponse(reply.body, headers=reply.headers)
    raise RuntimeError("a panel ended without finishing or failing")


async def answer_streamed(
    fmt: Format,
    ask: Ask,
    collection: str,
    run: PanelRun,
    presenter: Presenter,
    grace_s: float,
    keepalive_s: float,
) -> Response:
    first: Update | None
    try:  # a timeout scope, not `wait_for`: no task of its own per wait
        async with asyncio.timeout(grace_s):
            first = await run.next()
    except TimeoutError:
        first = None
    if isinstance(first, Failed):
        return error_response(fmt, first.status, first.message)
    bind_panel(first)
    encoder = fmt.encoder(ask, collection)
    body = stream_bytes(encoder, presenter, run, first, keepalive_s)
    return LeanStreamingResponse(body, media_type=encoder.media_type, headers={"Cache-Control": "no-cache"})


async def stream_bytes(
    encoder: StreamEncoder,
    presenter: Presenter,
    run: Updates[Update],
    first: Update | None,
    keepalive_s: float,
) -> AsyncIterator[bytes]:
    """The stream after its 200. `first` is what arrived before the 200 (None after a grace 200).
    Keep-alives count silence on the wire, not between updates: a panel whose updates write nothing
    (merged mode until its end) still keeps its client waiting."""
    loop = asyncio.get_running_loop()
    yield encoder.start()
    if first is None:
        yield encoder.keepalive()
    wrote = loop.time()
    update = first
    while True:
        if update is None:
            try:
                update = await run.next_within(keepalive_s - (loop.time() - wrote))
            except TimeoutError:
                yield encoder.keepalive()
                wrote = loop.time()
                continue
        if isinstance(update, Seated):
            piece = presenter.seated(update)
        elif isinstance(update, Landed):
            piece = presenter.landed(update)
        elif isinstance(update, Finished):
            last, bench = presenter.finished(update)
            yield Last((encoder.piece(last) if last else b"") + encoder.finish(bench))
            return
        else:
            yield Last(encoder.error(update.status, update.message))
            return
        if piece:
            yield encoder.piece(piece)
            wrote = loop.time()
        update = None

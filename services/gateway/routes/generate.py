"""The generation routes of every format: body → Ask → collection and reply mode → the mode's handler.

Reply modes plug in here: `MODES` maps a mode to the coroutine that answers it. `all` and `merged` run a
panel, each with its presenter; a mode not (yet) in the table is refused with 501 naming what does work.
A request the format answers without a panel (Gemini's `:countTokens`) never reaches a mode.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from services.gateway.ask import Ask, Refusal
from services.gateway.context import GatewayContext
from services.gateway.deliver import answer_streamed, answer_whole, error_response
from services.gateway.formats.base import Format
from services.gateway.http import GATEWAY_BODY_LIMIT, IMAGE_ADVICE, read_json_body
from services.gateway.keys.admit import admit, caller_of
from services.gateway.panel.present import PRESENTERS
from services.gateway.panel.resolve import Resolved, refuse_agentic
from services.gateway.route_mode.answer import answer_route
from services.gateway.route_mode.transport import AS_SENT, AsSent

ModeHandler = Callable[[GatewayContext, Format, Ask, Resolved], Awaitable[Response]]


async def answer_panel(ctx: GatewayContext, fmt: Format, ask: Ask, resolved: Resolved) -> Response:
    """P-2..P-15: every seat's answer side by side (`all`), or merged into one (`merged`)."""
    presenter = PRESENTERS[resolved.panel_mode]()
    run = ctx.panels.start(ask, resolved)
    if ask.stream:
        settings = ctx.settings
        return await answer_streamed(fmt, ask, resolved.canonical, run, presenter, settings.stream_grace_s,
                                     settings.keepalive_s)
    return await answer_whole(fmt, ask, run, presenter)


MODES: dict[str, ModeHandler] = {"all": answer_panel, "merged": answer_panel, "route": answer_route}


def generation_endpoint(fmt: Format) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        ctx: GatewayContext = request.app.state.ctx
        # Only `alt` of the query: the query may also carry a key (`?key=`), which no format may see.
        params = {**request.path_params, "alt": request.query_params.get("alt", "")}
        try:
            body = await read_json_body(request, GATEWAY_BODY_LIMIT, IMAGE_ADVICE)
            direct = fmt.direct(body, params)
            if direct is not None:
                return JSONResponse(direct)
            ask = replace(fmt.parse(body, params), caller=caller_of(request).name)
            AS_SENT.set(AsSent(body))  # route mode reads what the Ask lacks
            resolved = await ctx.resolve(ask)
            await admit(request, resolved)  # P-1 (6) key scope → 403, (7) key rpm → 429
            refuse_agentic(ask, resolved)
            handler = MODES.get(resolved.mode)
            if handler is None:
                raise Refusal(
                    501,
                    f"{resolved.mode} replies are not available on this gateway yet; ask for "
                    f"{resolved.canonical}:all for every answer side by side",
                )
        except Refusal as refusal:
            return error_response(fmt, refusal.status, refusal.message)
        return await handler(ctx, fmt, ask, resolved)

    endpoint.__name__ = f"generate_{fmt.name}"
    return endpoint

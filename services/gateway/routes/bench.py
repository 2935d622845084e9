"""`/bench/*` and `GET /v1/models`: verdicts, pending seats and records go to the ledger (H-G10..H-G12);
the model list comes from the configuration fold (H-G1). Errors in OpenAI's shape (H-1)."""

from __future__ import annotations

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from services.gateway.context import GatewayContext
from services.gateway.deliver import error_response
from services.gateway.formats import OPENAI_CHAT
from services.gateway.http import GATEWAY_BODY_LIMIT, read_json_body
from services.gateway.keys.admit import visible
from services.gateway.listing import model_rows
from shared import subjects
from shared.access import caller_of
from shared.commands import PendingReply, RecordReply, VerdictReply
from shared.ledger_api import pending_request, record_request, verdict_request
from shared.refusal import Refusal


async def list_models(request: Request) -> Response:
    ctx: GatewayContext = request.app.state.ctx
    return JSONResponse({"object": "list", "data": visible(model_rows(ctx.config), request)})


async def verdict(request: Request) -> Response:
    ctx: GatewayContext = request.app.state.ctx
    try:
        body = await read_json_body(request, GATEWAY_BODY_LIMIT)
        asked = verdict_request(body, caller_of(request).name)
        structlog.contextvars.bind_contextvars(call=asked.call)
        reply = await ctx.ask_ledger(subjects.RPC_LEDGER_VERDICT, asked, VerdictReply)
    except Refusal as refusal:
        return error_response(OPENAI_CHAT, refusal.status, refusal.message)
    return JSONResponse({"ok": True, "recorded": reply.recorded})


async def pending(request: Request) -> Response:
    ctx: GatewayContext = request.app.state.ctx
    try:
        body = await read_json_body(request, GATEWAY_BODY_LIMIT)
        asked = pending_request(body)
        reply = await ctx.ask_ledger(subjects.RPC_LEDGER_PENDING, asked, PendingReply)
    except Refusal as refusal:
        return error_response(OPENAI_CHAT, refusal.status, refusal.message)
    return JSONResponse({"pending": reply.pending})


async def record(request: Request) -> Response:
    ctx: GatewayContext = request.app.state.ctx
    try:
        asked = record_request(request.query_params)
        reply = await ctx.ask_ledger(subjects.RPC_LEDGER_RECORD, asked, RecordReply)
    except Refusal as refusal:
        return error_response(OPENAI_CHAT, refusal.status, refusal.message)
    return JSONResponse(reply.model_dump(mode="json"))

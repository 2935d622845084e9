"""The admin JSON API (a slice of H-D2/H-D3): configuration reads and writes, and the ledger rebuild.

Replies are `{"ok": true, ...}`, or `{"ok": false, "errors": [reasons]}` with 400 (415/413 for the body
rules). Every write publishes exactly one config event (`admin.writer`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from services.gateway.admin import rules, views
from services.gateway.admin.writer import WriteConflict
from services.gateway.ask import Refusal
from services.gateway.context import GatewayContext
from services.gateway.http import ADMIN_BODY_LIMIT, read_json_body
from shared import subjects
from shared.events import (
    CollectionRemoved,
    CollectionSaved,
    ConfigEvent,
    EndpointSaved,
    ModelRegistered,
    ModelRetired,
)

Endpoint = Callable[[Request], Awaitable[Response]]


def refused(status: int, errors: list[str]) -> JSONResponse:
    return JSONResponse({"ok": False, "errors": errors}, status_code=status)


def ok(**fields: Any) -> JSONResponse:
    return JSONResponse({"ok": True, **fields})


def written(ctx: GatewayContext, event: ConfigEvent) -> dict[str, Any]:
    """What a write answers besides `ok`: the saved thing as the gateway now holds it."""
    state = ctx.config
    if isinstance(event, EndpointSaved):
        return {"endpoint": views.endpoint_view(state.endpoints[event.name], state)}
    if isinstance(event, ModelRegistered):
        return {"model": views.model_view(state.models[event.alias], state)}
    if isinstance(event, CollectionSaved):
        return {"collection": views.collection_view(state.collections[event.name], state)}
    if isinstance(event, ModelRetired):
        return {"retired": {"alias": event.alias, "why": event.why,
                            "collections": state.retired[event.alias].collections}}
    if isinstance(event, CollectionRemoved):
        return {"removed": event.name}
    return {"settings": views.settings(state)}


def write_endpoint(rule_for: Callable[[dict[str, Any]], rules.Rule]) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        ctx: GatewayContext = request.app.state.ctx
        try:
            body = await read_json_body(request, ADMIN_BODY_LIMIT)
            event = await ctx.writer.write(rule_for(body))
        except Refusal as refusal:
            return refused(refusal.status, [refusal.message])
        except rules.Invalid as invalid:
            return refused(400, invalid.errors)
        except WriteConflict as conflict:
            return refused(409, [str(conflict)])
        return ok(**written(ctx, event))

    endpoint.__name__ = f"admin_{rule_for.__name__}"
    return endpoint


async def list_endpoints(request: Request) -> Response:
    ctx: GatewayContext = request.app.state.ctx
    return ok(endpoints=views.endpoints(ctx.config), default_endpoint=ctx.config.default_endpoint())


async def list_models(request: Request) -> Response:
    ctx: GatewayContext = request.app.state.ctx
    return ok(models=views.models(ctx.config))


async def list_collections(request: Request) -> Response:
    ctx: GatewayContext = request.app.state.ctx
    return ok(**views.collections(ctx.config))


async def rebuild_ledger(request: Request) -> Response:
    ctx: GatewayContext = request.app.state.ctx
    try:
        reply = await ctx.ask_ledger(subjects.RPC_LEDGER_REBUILD, b"{}")
    except Refusal as refusal:
        return refused(refusal.status, [refusal.message])
    return ok(**{k: v for k, v in reply.items() if k != "ok"})


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})


WRITES: dict[str, Callable[[dict[str, Any]], rules.Rule]] = {
    "/api/endpoint": rules.save_endpoint,
    "/api/models": rules.register_model,
    "/api/collection": rules.save_collection,
    "/api/collection/remove": rules.remove_collection,
    "/api/gateway-settings": rules.save_settings,
    "/api/remove": rules.retire_model,
}
READS: dict[str, Endpoint] = {
    "/api/endpoints": list_endpoints,
    "/api/models": list_models,
    "/api/collections": list_collections,
}

"""Endpoints on the admin API (O-5, H-D3): add (after the callers list its `/models`: a failing list saves
nothing), test, key, remove, default. Keys never pass through here: only callers hold them, so the model
list, fetched by a caller, is also how we learn whether the callers have an endpoint's key."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter
from starlette.requests import Request

from services.console.admin import views
from services.console.admin.schemas import (
    REFUSALS,
    EndpointBody,
    EndpointKeyReply,
    EndpointName,
    EndpointRemoveBody,
    EndpointReply,
    EndpointSavedReply,
    EndpointsReply,
    RemovedReply,
)
from services.console.context import ConsoleContext, context
from services.console.routes.admin_base import AdminRoute, sent, write
from shared import bus_calls, rpc, subjects
from shared.commands import ModelsReply, ModelsRequest
from shared.config_rules import endpoints as endpoint_rules
from shared.config_rules.base import Invalid, Missing
from shared.events import EndpointRemoved, EndpointSaved
from shared.loopback import is_loopback
from shared.provider_keys import key_variable
from shared.refusal import Refusal

router = APIRouter(route_class=AdminRoute, tags=["endpoints"])
LIST_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Found:
    models: list[str]
    error: str
    key_set: bool | None

    def view(self) -> dict[str, object]:
        note = self.error or f"the callers listed {len(self.models)} models"
        return {"count": len(self.models), "models": self.models[:500], "key_set": self.key_set, "note": note}


async def listing(ctx: ConsoleContext, ep: EndpointSaved) -> Found:
    """Ask any caller for the endpoint's model list (C-3)."""
    ask = ModelsRequest(endpoint=ep.name, base=ep.base, api=ep.api, headers=ep.headers)
    try:
        reply = await rpc.call(ctx.nc, subjects.RPC_CALLER_MODELS, ask, ModelsReply, LIST_TIMEOUT_S)
    except rpc.RpcFailure as failure:
        if not failure.answered:
            raise bus_calls.refusal(subjects.RPC_CALLER_MODELS, failure, LIST_TIMEOUT_S) from None
        missing = "missing key" in failure.message
        return Found([], failure.message, False if missing else None)
    return Found([m.id for m in reply.models], "", None if is_loopback(ep.base) else True)


def refusal(ep: EndpointSaved, found: Found) -> Refusal:
    return Refusal(400, f"{ep.name}'s model list failed, so nothing was saved: {found.error} (the callers "
                        f"read its key from {key_variable(ep.name)})")


@router.get("/api/endpoints", response_model=EndpointsReply, responses=REFUSALS)
async def list_endpoints(request: Request) -> dict[str, object]:
    state = context(request).config
    return {"ok": True, "endpoints": views.endpoints(state), "default_endpoint": state.default_endpoint()}


@router.post("/api/endpoint", response_model=EndpointReply, responses=REFUSALS)
async def save_endpoint(body: EndpointBody, request: Request) -> dict[str, object]:
    """Add or change an endpoint once the callers have listed its models (`test`: list only)."""
    ctx = context(request)
    fields = sent(body)
    test = fields.pop("test", False)
    rule = endpoint_rules.save_checked(fields)
    candidate = rule(ctx.config, "check")
    assert isinstance(candidate, EndpointSaved)
    found = await listing(ctx, candidate)
    if found.error:
        raise refusal(candidate, found)
    if test:
        return {"ok": True, "endpoint": None, "listing": found.view(), "saved": False}
    event = await write(request, rule)
    assert isinstance(event, EndpointSaved)
    view = {**views.endpoint_view(ctx.config.endpoints[event.name], ctx.config), "key_set": found.key_set}
    return {"ok": True, "endpoint": view, "listing": found.view(), "saved": True}


def named(name: str, ctx: ConsoleContext) -> EndpointSaved:
    ep = ctx.config.endpoints.get(name)
    if ep is None:
        known = ", ".join(sorted(ctx.config.endpoints)) or "none"
        raise Invalid([Missing(f"no endpoint named {name!r} (endpoints: {known})")])
    return ep


@router.post("/api/endpoint/test", response_model=EndpointReply, responses=REFUSALS)
async def test_endpoint(body: EndpointName, request: Request) -> dict[str, object]:
    """List an endpoint's models through a caller; saves nothing."""
    ctx = context(request)
    ep = named(body.name, ctx)
    found = await listing(ctx, ep)
    if found.error:
        raise Refusal(400, f"{ep.name}'s model list failed: {found.error}")
    view = {**views.endpoint_view(ep, ctx.config), "key_set": found.key_set}
    return {"ok": True, "endpoint": view, "listing": found.view(), "saved": False}


@router.post("/api/endpoint/key", response_model=EndpointKeyReply, responses=REFUSALS)
async def endpoint_key(body: EndpointName, request: Request) -> dict[str, object]:
    """Keys are never sent to or stored by the gateway: this says where the callers read it, and whether
    they have it now (by listing the endpoint's models through one of them)."""
    ctx = context(request)
    ep = named(body.name, ctx)
    found = await listing(ctx, ep)
    variable = key_variable(ep.name)
    where = (f"Keys live with the callers, never on the bus: set {variable} in the callers' environment, or "
             "a file of that name in their BENCH_SECRETS_PATH (a mounted secret), or, with bench up, give "
             f"it once with `bench endpoint add {ep.name} --base … --key-stdin` (the data folder's secrets "
             "file); they read it on each call.")
    now = {True: "The callers have it: the model list answered.", False: "The callers do not have it yet.",
           None: f"The model list answered: {found.error}" if found.error else "The model list answered."}
    return {"ok": True, "name": ep.name, "key_variable": variable, "key_set": found.key_set,
            "message": f"{where} {now[found.key_set]}"}


@router.post("/api/endpoint/remove", response_model=RemovedReply, responses=REFUSALS)
async def remove_endpoint(body: EndpointRemoveBody, request: Request) -> dict[str, object]:
    """Remove an endpoint; `with_models` retires the models on it (restorable once it is back)."""
    on_it = endpoint_rules.models_on(body.name, context(request).config)
    event = await write(request, endpoint_rules.remove_endpoint(sent(body)))
    assert isinstance(event, EndpointRemoved)
    return {"ok": True, "removed": event.name, "retired": on_it if event.retire_models else []}


@router.post("/api/endpoint/default", response_model=EndpointSavedReply, responses=REFUSALS)
async def default_endpoint(body: EndpointName, request: Request) -> dict[str, object]:
    event = await write(request, endpoint_rules.make_default(sent(body)))
    state = context(request).config
    assert isinstance(event, EndpointSaved)
    return {"ok": True, "endpoint": views.endpoint_view(state.endpoints[event.name], state)}

"""Models on the admin API (C-5, C-7, C-8, C-14; H-D2 /api/models, H-D3 /api/model, /api/model-options,
/api/remove, /api/restore): every write one config event, every list a view of the fold."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from services.gateway.admin import model_rules, more_views, rules
from services.gateway.admin.feeds import Feeds
from services.gateway.admin.schemas import (
    REFUSALS,
    AliasBody,
    ModelChangeBody,
    ModelOptionsBody,
    ModelRegisterBody,
    ModelReply,
    ModelsReply,
    RetireBody,
    RetiredReply,
)
from services.gateway.routes.admin_base import AdminRoute, context, sent, write
from shared.events import ModelRegistered, ModelRetired, ModelUpdated

router = APIRouter(route_class=AdminRoute, tags=["models"])


def feeds(request: Request) -> Feeds:
    found = getattr(request.app.state, "feeds", None)
    if found is None:
        found = Feeds(context(request).js)
        request.app.state.feeds = found
    return found


async def model_view(request: Request, alias: str) -> dict[str, Any]:
    state = context(request).config
    resting = (await feeds(request).resting()).until
    return more_views.model_row(state.models[alias], state, resting, datetime.now(UTC))


@router.get("/api/models", response_model=ModelsReply, responses=REFUSALS)
async def list_models(request: Request) -> dict[str, Any]:
    """Every model, retired ones too, with its status."""
    state = context(request).config
    resting = (await feeds(request).resting()).until
    return {"ok": True, "models": more_views.models(state, resting, datetime.now(UTC)),
            "renamed": dict(state.renamed)}


@router.post("/api/models", response_model=ModelReply, responses=REFUSALS)
async def register(body: ModelRegisterBody, request: Request) -> dict[str, Any]:
    """Register a served model under an alias (C-5)."""
    event = await write(request, rules.register_model(sent(body)))
    assert isinstance(event, ModelRegistered)
    return {"ok": True, "model": await model_view(request, event.alias)}


@router.post("/api/model", response_model=ModelReply, responses=REFUSALS)
async def change(body: ModelChangeBody, request: Request) -> dict[str, Any]:
    """Rename a model, change its role, make it ad hoc or not."""
    event = await write(request, model_rules.change_model(sent(body)))
    assert isinstance(event, ModelUpdated)
    return {"ok": True, "model": await model_view(request, event.new_alias or event.alias)}


@router.post("/api/model-options", response_model=ModelReply, responses=REFUSALS)
async def options(body: ModelOptionsBody, request: Request) -> dict[str, Any]:
    """The model's own max_tokens for panel calls (null: none of ours)."""
    event = await write(request, model_rules.model_options(body.model_dump()))
    assert isinstance(event, ModelUpdated)
    return {"ok": True, "model": await model_view(request, event.alias)}


@router.post("/api/remove", response_model=RetiredReply, responses=REFUSALS)
async def retire(body: RetireBody, request: Request) -> dict[str, Any]:
    """Retire a model: out of every collection, its evidence kept, its alias never reused (C-14)."""
    event = await write(request, rules.retire_model(sent(body)))
    assert isinstance(event, ModelRetired)
    record = context(request).config.retired[event.alias]
    retired = {"alias": event.alias, "why": event.why, "collections": record.collections}
    return {"ok": True, "retired": retired}


@router.post("/api/restore", response_model=ModelReply, responses=REFUSALS)
async def restore(body: AliasBody, request: Request) -> dict[str, Any]:
    """Bring a retired model back, into the collections it left that still exist and have room."""
    await write(request, model_rules.restore_model(sent(body)))
    return {"ok": True, "model": await model_view(request, body.alias)}

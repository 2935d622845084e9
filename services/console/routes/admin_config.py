"""Collections, gateway settings, limits, the change log, the status page and the ledger rebuild on the
admin API (C-10, C-11, L-1, C-17, H-D2 /api/status)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from starlette.requests import Request

from services.console.admin import more_views, views
from services.console.admin.schemas import (
    REFUSALS,
    ChangesReply,
    CollectionBody,
    CollectionName,
    CollectionRemovedReply,
    CollectionReply,
    CollectionsReply,
    ConnectionLimitsBody,
    ConnectionsReply,
    LimitsReply,
    ModelLimitsBody,
    RebuildReply,
    SchedulerBody,
    SchedulerReply,
    SettingsBody,
    SettingsReply,
    StatusReply,
)
from services.console.context import context
from services.console.routes import admin_onboard
from services.console.routes.admin_base import AdminRoute, sent, write
from services.console.routes.admin_models import feeds
from shared import subjects
from shared.access import keys_required
from shared.commands import RebuildRequest, Rebuilt
from shared.config_rules import base as rules
from shared.config_rules import limits as limit_rules
from shared.config_rules import scheduler as scheduler_rules
from shared.config_rules.collection_merge import save_merged
from shared.events import CollectionRemoved, CollectionSaved, LimitsSaved
from shared.version import package_version

router = APIRouter(route_class=AdminRoute, tags=["configuration"])


@router.get("/api/collections", response_model=CollectionsReply, responses=REFUSALS)
async def list_collections(request: Request) -> dict[str, Any]:
    state = context(request).config
    chat = [a for a, m in state.models.items() if m.role not in rules.NOT_CHAT_ROLES]
    return {"ok": True, **views.collections(state), "models": chat}


@router.post("/api/collection", response_model=CollectionReply, responses=REFUSALS)
async def save_collection(body: CollectionBody, request: Request) -> dict[str, Any]:
    """Save a collection; fields not sent keep their values, `add`/`remove` edit the members (C-10)."""
    event = await write(request, save_merged(sent(body)))
    assert isinstance(event, CollectionSaved)
    state = context(request).config
    return {"ok": True, "collection": views.collection_view(state.collections[event.name], state)}


@router.post("/api/collection/remove", response_model=CollectionRemovedReply, responses=REFUSALS)
async def remove_collection(body: CollectionName, request: Request) -> dict[str, Any]:
    event = await write(request, rules.remove_collection(sent(body)))
    assert isinstance(event, CollectionRemoved)
    return {"ok": True, "removed": event.name}


@router.post("/api/gateway-settings", response_model=SettingsReply, responses=REFUSALS)
async def save_settings(body: SettingsBody, request: Request) -> dict[str, Any]:
    """max_calls 1..10 (not below any collection's size), max_explorers 0..2 (C-11)."""
    await write(request, rules.save_settings(sent(body)))
    return {"ok": True, "settings": views.settings(context(request).config)}


@router.get("/api/connections", response_model=ConnectionsReply, responses=REFUSALS)
async def list_limits(request: Request) -> dict[str, Any]:
    """Each connection a chat model uses, with the user's limits; and the user's limits per model (L-1)."""
    return {"ok": True, **more_views.connections(context(request).config)}


def limits_reply(event: LimitsSaved) -> dict[str, Any]:
    return {"ok": True, "scope": event.scope, "name": event.name, "limits": more_views.limits_of(event)}


@router.post("/api/connection-limits", response_model=LimitsReply, responses=REFUSALS)
async def save_connection_limits(body: ConnectionLimitsBody, request: Request) -> dict[str, Any]:
    """Replace a connection's limits (rpm, rpd, tpm, tpd, rpmo; null: none)."""
    fields = {"connection": body.connection, "limits": body.limits.model_dump()}
    event = await write(request, limit_rules.connection_limits(fields))
    assert isinstance(event, LimitsSaved)
    return limits_reply(event)


@router.post("/api/model-limits", response_model=LimitsReply, responses=REFUSALS)
async def save_model_limits(body: ModelLimitsBody, request: Request) -> dict[str, Any]:
    """Replace one model's limits (rpm, rpd, tpm, tpd; null: none)."""
    fields = {"alias": body.alias, "limits": body.limits.model_dump(exclude_unset=True)}
    event = await write(request, limit_rules.model_limits(fields))
    assert isinstance(event, LimitsSaved)
    return limits_reply(event)


@router.get("/api/changes", response_model=ChangesReply, responses=REFUSALS)
async def changes(request: Request, limit: int = Query(default=200, ge=1, le=5000)) -> dict[str, Any]:
    """The change log, newest first: who changed what (never a secret)."""
    log = await feeds(request).changes(context(request).config.seq)
    return {"ok": True, "changes": log.newest(limit)}


@router.get("/api/status", response_model=StatusReply, responses=REFUSALS)
async def status(request: Request) -> dict[str, Any]:
    ctx = context(request)
    settings = ctx.settings
    token = settings.admin_token.get_secret_value() if settings.admin_token else None
    base = settings.public_url.rstrip("/") if settings.public_url else f"http://127.0.0.1:{settings.port}"
    scheduler = scheduler_rules.view(ctx.config, settings.scheduler)
    return {"ok": True, **more_views.status(
        ctx.config, version=package_version(), gateway=f"{base}/v1", data=str(settings.home),
        scheduler=scheduler["mode"], jobs=scheduler["jobs"], auth=bool(token),
        keys_required=keys_required(token, settings.require_keys),
    ), "onboarding": await admin_onboard.summary(request)}


@router.get("/api/scheduler", response_model=SchedulerReply, responses=REFUSALS)
async def scheduler(request: Request) -> dict[str, Any]:
    """The scheduler's mode and which jobs are on (HL-7); `source` says whether they were saved here or
    come from the prober's BENCH_SCHEDULER."""
    ctx = context(request)
    return {"ok": True, "scheduler": scheduler_rules.view(ctx.config, ctx.settings.scheduler)}


@router.post("/api/scheduler", response_model=SchedulerReply, responses=REFUSALS)
async def save_scheduler(body: SchedulerBody, request: Request) -> dict[str, Any]:
    """Set the mode (off, log-only, run) and switch jobs off or on; every prober replica follows."""
    ctx = context(request)
    await write(request, scheduler_rules.save_scheduler(sent(body), ctx.settings.scheduler))
    return {"ok": True, "scheduler": scheduler_rules.view(ctx.config, ctx.settings.scheduler)}


@router.post("/api/ledger/rebuild", response_model=RebuildReply, responses=REFUSALS)
async def rebuild_ledger(request: Request) -> dict[str, Any]:
    """Throw the ledger's tables away and fold the whole event stream again."""
    reply = await context(request).ask_ledger(subjects.RPC_LEDGER_REBUILD, RebuildRequest(), Rebuilt)
    return {**reply.model_dump(mode="json"), "ok": True}

"""Models on the admin API (C-5, C-7, C-8, C-14, HL-6; H-D2 /api/models, H-D3 /api/model,
/api/model-options, /api/remove, /api/restore, /api/retry): every write one config event, every list a
view of the fold."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from services.console.admin import more_views
from services.console.admin.feeds import Feeds
from services.console.admin.schemas import (
    REFUSALS,
    AliasBody,
    ModelChangeBody,
    ModelFactsBody,
    ModelFactsReply,
    ModelOptionsBody,
    ModelRegisterBody,
    ModelReply,
    ModelsReply,
    RetireBody,
    RetiredReply,
    RetryReply,
)
from services.console.context import context
from services.console.routes.admin_base import AdminRoute, sent, write
from shared import rpc, subjects
from shared.alerts import retiring
from shared.commands import SqlReply, SqlRequest
from shared.config_rules import base as rules
from shared.config_rules import facts as fact_rules
from shared.config_rules import models as model_rules
from shared.events import ModelFactsSet, ModelRegistered, ModelRetired, ModelUpdated
from shared.failures import failure_class
from shared.ids import candidate_id
from shared.seat_wait import ask_and_wait

router = APIRouter(route_class=AdminRoute, tags=["models"])


def feeds(request: Request) -> Feeds:
    found = getattr(request.app.state, "feeds", None)
    if found is None:
        found = Feeds(context(request).js, context(request).config)
        request.app.state.feeds = found
    return found


LAST_PROBES = ('SELECT alias, max("at"), arg_max(answered, seq), arg_max(failure, seq) FROM probes '
               "GROUP BY alias")
PROBES_TIMEOUT_S = 2.0


async def last_probes(request: Request) -> more_views.Probes:
    """Each model's latest probe, from the ledger; none while the ledger is away (the status says untested
    rather than the list failing)."""
    ask = SqlRequest(sql=LAST_PROBES, max_rows=10_000)
    try:
        reply = await rpc.call(context(request).nc, subjects.RPC_LEDGER_SQL, ask, SqlReply,
                               timeout=PROBES_TIMEOUT_S, retry_s=())
    except rpc.RpcFailure:
        return {}
    return {alias: {"at": at, "answered": answered, "failure": failure}
            for alias, at, answered, failure in reply.rows}


async def model_view(request: Request, alias: str) -> dict[str, Any]:
    state = context(request).config
    resting = (await feeds(request).resting()).until
    return more_views.model_row(state.models[alias], state, resting, datetime.now(UTC),
                                await last_probes(request))


@router.get("/api/models", response_model=ModelsReply, responses=REFUSALS)
async def list_models(request: Request) -> dict[str, Any]:
    """Every model, retired ones too, with its status (healthy, failing, cooling, retiring, untested,
    retired) and its latest probe."""
    state = context(request).config
    resting = (await feeds(request).resting()).until
    probes = await last_probes(request)
    return {"ok": True, "models": more_views.models(state, resting, datetime.now(UTC), probes),
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


@router.get("/api/model/facts", response_model=ModelFactsReply, responses=REFUSALS)
async def facts(request: Request, alias: str) -> dict[str, Any]:
    """A model's facts (C-15): each with its value (null: unknown) and where it came from."""
    await feeds(request).resting()  # folds the windows providers stated (learned), as the seater does
    return {"ok": True, **fact_rules.facts_view(alias, context(request).config)}


@router.post("/api/model/facts", response_model=ModelFactsReply, responses=REFUSALS)
async def set_facts(body: ModelFactsBody, request: Request) -> dict[str, Any]:
    """Set or clear the user's own facts for a model: each wins over the catalog, registration and learned
    values until cleared; the seater acts on them at once (tools for route mode, vision for images)."""
    await feeds(request).resting()
    event = await write(request, fact_rules.set_facts(sent(body)))
    assert isinstance(event, ModelFactsSet)
    return {"ok": True, **fact_rules.facts_view(event.alias, context(request).config)}


@router.post("/api/remove", response_model=RetiredReply, responses=REFUSALS)
async def retire(body: RetireBody, request: Request) -> dict[str, Any]:
    """Retire a model: out of every collection, its evidence kept, its alias never reused (C-14)."""
    event = await write(request, rules.retire_model(sent(body)))
    assert isinstance(event, ModelRetired)
    record = context(request).config.retired[event.alias]
    retired = {"alias": event.alias, "why": event.why, "collections": record.collections}
    return {"ok": True, "retired": retired}


@router.post("/api/retry", response_model=RetryReply, responses=REFUSALS)
async def retry(body: AliasBody, request: Request) -> dict[str, Any]:
    """One probe call now, through the callers (HL-6); an answer clears the model's `retiring` alert."""
    ctx = context(request)
    call = model_rules.retry_call(sent(body), ctx.config, candidate_id("rt"), time.time())
    done = await ask_and_wait(ctx.nc, call)
    answered = done is not None and done.status == "ok"
    cleared = answered and retiring(ctx.config.alerts, call.served) is not None
    if cleared:
        await write(request, model_rules.clear_retiring(call.served))
    return {"ok": True, "alias": call.alias, "answered": answered,
            "status": done.status if done else "unanswered",
            "failure": failure_class(done.status, done.error, done.answer) if done else "timeout",
            "seconds": done.seconds if done else None, "error": done.error if done else "",
            "cleared": cleared}


@router.post("/api/restore", response_model=ModelReply, responses=REFUSALS)
async def restore(body: AliasBody, request: Request) -> dict[str, Any]:
    """Bring a retired model back, into the collections it left that still exist and have room."""
    await write(request, model_rules.restore_model(sent(body)))
    return {"ok": True, "model": await model_view(request, body.alias)}

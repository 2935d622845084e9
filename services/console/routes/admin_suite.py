"""The review suite on the admin API: a pass now (T-6), run by a prober (`bench.rpc.prober.suite`), and the
results as the ledger folded them (T-5). The gateway holds no task and calls no model for it: the prober
reads the tasks, the callers ask the model."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from starlette.requests import Request

from services.console.admin.schemas import (
    REFUSALS,
    JudgedClaimsReplyBody,
    RankReplyBody,
    RescoreReplyBody,
    SuiteResultsReplyBody,
    SuiteRunBody,
    SuiteRunReplyBody,
)
from services.console.context import context
from services.console.routes.admin_base import AdminRoute
from shared import bus_calls, subjects
from shared.commands import (
    JudgedClaimsReply,
    JudgedClaimsRequest,
    RankReply,
    RankRequest,
    RescoreReply,
    RescoreRequest,
    SuiteResultsReply,
    SuiteResultsRequest,
    SuiteRunReply,
    SuiteRunRequest,
)

router = APIRouter(route_class=AdminRoute, tags=["suite"])

# A pass asks up to six tasks one at a time, each paced by the callers: minutes, not seconds.
SUITE_TIMEOUT_S = 900.0
RANK_TIMEOUT_S = 10.0
# A rescore reads one stored answer per model and task from the stream: seconds for a few hundred.
RESCORE_TIMEOUT_S = 120.0


@router.post("/api/suite/run", response_model=SuiteRunReplyBody, responses=REFUSALS)
async def run(body: SuiteRunBody, request: Request) -> dict[str, Any]:
    """Run one suite pass now and answer with its scores (409 while another pass runs on the prober)."""
    req = SuiteRunRequest(model=body.model, task=body.task, next=body.next)
    reply = await bus_calls.ask(context(request).nc, subjects.RPC_PROBER_SUITE, req, SuiteRunReply,
                                SUITE_TIMEOUT_S)
    return {**reply.model_dump(mode="json"), "ok": True}


@router.get("/api/suite/results", response_model=SuiteResultsReplyBody, responses=REFUSALS)
async def results(request: Request, alias: str = "") -> dict[str, Any]:
    """Suite scores per model and shape from each model's latest answer per task, and the confidently wrong
    answers (false alarms on controls, wrong lines, wrong verdicts, traps)."""
    reply = await context(request).ask_ledger(subjects.RPC_LEDGER_SUITE, SuiteResultsRequest(alias=alias),
                                              SuiteResultsReply)
    return {**reply.model_dump(mode="json"), "ok": True}


@router.get("/api/collection/rank", response_model=RankReplyBody, responses=REFUSALS)
async def rank(request: Request, name: str) -> dict[str, Any]:
    """Why a collection's members rank as they do: useful verdicts, suite findings, rests (the seater's own
    fold, so exactly what route mode and the merger fallback use)."""
    reply = await bus_calls.ask(context(request).nc, subjects.RPC_SEATER_RANK, RankRequest(collection=name),
                                RankReply, RANK_TIMEOUT_S)
    return {**reply.model_dump(mode="json"), "ok": True}


@router.get("/api/suite/claims", response_model=JudgedClaimsReplyBody, responses=REFUSALS)
async def claims(request: Request, limit: int = Query(default=200, ge=1, le=2000)) -> dict[str, Any]:
    """Judged claims to mine into claim tasks (`bench suite mine`): each call's latest verdict that names
    real or false claims, with the prompt its panel logged. Admin only: prompts are in it."""
    reply = await context(request).ask_ledger(subjects.RPC_LEDGER_CLAIMS, JudgedClaimsRequest(limit=limit),
                                              JudgedClaimsReply)
    return {**reply.model_dump(mode="json"), "ok": True}


@router.post("/api/suite/rescore", response_model=RescoreReplyBody, responses=REFUSALS)
async def rescore(request: Request) -> dict[str, Any]:
    """Score every model's latest answer per task again with today's tasks and scorer (T-5), from the
    answers the stream keeps; each changed score is recorded and listed (409 while a pass runs)."""
    reply = await bus_calls.ask(context(request).nc, subjects.RPC_PROBER_RESCORE, RescoreRequest(),
                                RescoreReply, RESCORE_TIMEOUT_S)
    return {**reply.model_dump(mode="json"), "ok": True}

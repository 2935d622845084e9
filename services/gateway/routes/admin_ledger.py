"""The ledger's views on the admin API (L-5, L-7, analytics SQL): each route asks the ledger over the bus
(the gateway never opens DuckDB) and passes its refusals on with their status. Admin only: the usage and
the SQL view read tables that hold prompts and answers."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel
from starlette.requests import Request

from services.gateway.admin.schemas import (
    REFUSALS,
    SQL_REFUSALS,
    QuotaReply,
    ReportReply,
    SqlBody,
    SqlReply,
    UsageReply,
)
from services.gateway.ledger_api import iso_time, report_request
from services.gateway.routes.admin_base import AdminRoute, context
from shared import commands, subjects
from shared.commands import QuotaRequest, SqlRequest, UsageRequest
from shared.ids import utcnow

router = APIRouter(route_class=AdminRoute, tags=["ledger"])


async def ask(request: Request, subject: str, req: BaseModel, reply_type: type[BaseModel]) -> dict[str, Any]:
    """The ledger's reply as ours (`ok: true`, without its empty error slot); its refusals raise."""
    reply = await context(request).ask_ledger(subject, req, reply_type)
    return {**{k: v for k, v in reply.model_dump(mode="json").items() if k != "error"}, "ok": True}


@router.get("/api/quota", response_model=QuotaReply, responses=REFUSALS)
async def quota(request: Request) -> dict[str, Any]:
    """Live quota records, what was sent per connection (24 h, this month), resting models, known limits."""
    return await ask(request, subjects.RPC_LEDGER_QUOTA, QuotaRequest(), commands.QuotaReply)


@router.get("/api/usage", response_model=UsageReply, responses=REFUSALS)
async def usage(
    request: Request,
    connection: str = "",
    alias: str = "",
    purpose: str = Query(default="", description="panel, merger, route, probe, shadow or listing"),
    since: str | None = Query(default=None, description="ISO 8601; a time without a zone is UTC",
                              json_schema_extra={"format": "date-time"}),
    limit: int = Query(default=100, ge=1, le=1000),
) -> dict[str, Any]:
    """The latest provider calls, newest first, narrowed by connection, alias, purpose and start time."""
    when = iso_time(since)
    req = UsageRequest(connection=connection, alias=alias, purpose=purpose, since=when, limit=limit)
    return await ask(request, subjects.RPC_LEDGER_USAGE, req, commands.UsageReply)


@router.post("/api/sql", response_model=SqlReply, responses=SQL_REFUSALS)
async def sql(body: SqlBody, request: Request) -> dict[str, Any]:
    """One read-only SELECT over the ledger's tables, at most `max_rows` rows (10 s, 512 kB at most)."""
    req = SqlRequest(sql=body.sql, max_rows=body.max_rows)
    return await ask(request, subjects.RPC_LEDGER_SQL, req, commands.SqlReply)


@router.get("/api/report", response_model=ReportReply, responses=REFUSALS)
async def report(
    request: Request,
    since: str | None = Query(default=None, json_schema_extra={"format": "date-time"},
                              description="ISO 8601, UTC when no zone; default: 30 days before until"),
    until: str | None = Query(default=None, description="ISO 8601, UTC when no zone; default: now",
                              json_schema_extra={"format": "date-time"}),
    price: list[str] = Query(default=[], description="alias:input:output in dollars per million tokens"),
) -> dict[str, Any]:
    """Offload seats per model and per collection over a period: seats, useful rate, judged share, latency
    p50/p95, tokens, cost (for the models priced here) and failures by class."""
    req = report_request(since, until, price, utcnow())
    return await ask(request, subjects.RPC_LEDGER_REPORT, req, commands.ReportReply)

"""The ledger's views on the admin API (L-5, L-7, analytics SQL): each route asks the ledger over the bus
(the gateway never opens DuckDB) and passes its refusals on with their status. Admin only: the usage and
the SQL view read tables that hold prompts and answers."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel
from starlette.requests import Request

from services.console.admin.schemas import (
    REFUSALS,
    SQL_REFUSALS,
    QuotaReply,
    ReportReply,
    SqlBody,
    SqlReply,
    UsageReply,
)
from services.console.context import ConsoleContext, context
from services.console.routes.admin_base import AdminRoute
from shared import commands, subjects
from shared.commands import ExportChunkRequest, QuotaRequest, SqlRequest, UsageRequest
from shared.ids import utcnow
from shared.ledger_api import AFTER_PATTERN, PRICE_PATTERN, export_request, iso_time, report_request
from shared.ledger_export import EXPORT_ENTRY, TAR_END, tar_header, tar_padding
from shared.streaming import LeanStreamingResponse

router = APIRouter(route_class=AdminRoute, tags=["ledger"])
# A first export of a big ledger writes every row: minutes, not the usual ledger answer's seconds.
EXPORT_TIMEOUT_S = 600.0


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
    price: list[str] = Query(default=[], description="alias:input:output in dollars per million tokens",
                             json_schema_extra={"items": {"type": "string", "pattern": PRICE_PATTERN}}),
) -> dict[str, Any]:
    """Offload seats per model and per collection over a period: seats, useful rate, judged share, latency
    p50/p95, tokens, cost (for the models priced here) and failures by class."""
    req = report_request(since, until, price, utcnow())
    return await ask(request, subjects.RPC_LEDGER_REPORT, req, commands.ReportReply)


class TarResponse(LeanStreamingResponse):
    media_type = "application/x-tar"


# FastAPI documents a route's other answers in its own media type: the refusals are JSON, said explicitly.
TAR_REFUSALS: dict[int | str, dict[str, Any]] = {
    status: {"description": refusal["description"],
             "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorReply"}}}}
    for status, refusal in REFUSALS.items()
}


async def archive(ctx: ConsoleContext, reply: commands.ExportReply) -> AsyncIterator[bytes]:
    """The export as a tar: `export.json` (the ledger's reply: marks, rows, files), then each file, fetched
    from the ledger by chunks (a file is never held whole here)."""
    mtime = reply.at.timestamp()
    head = reply.model_dump_json().encode()
    yield tar_header(EXPORT_ENTRY, len(head), mtime) + head + tar_padding(len(head))
    for file in reply.files:
        yield tar_header(file.path, file.bytes, mtime)
        offset = 0
        while offset < file.bytes:
            req = ExportChunkRequest(export=reply.export, path=file.path, offset=offset)
            chunk = await ctx.ask_ledger(subjects.RPC_LEDGER_EXPORT_CHUNK, req, commands.ExportChunkReply)
            data = base64.b64decode(chunk.data)[: file.bytes - offset]
            if not data:
                raise RuntimeError(f"{file.path} ended at {offset} of {file.bytes} bytes")
            offset += len(data)
            yield data
        yield tar_padding(file.bytes)
    yield TAR_END


@router.get("/api/ledger/export", response_class=TarResponse, responses=TAR_REFUSALS)
async def ledger_export(
    request: Request,
    since: str | None = Query(default=None, description="only rows of this UTC day or later",
                              json_schema_extra={"format": "date"}),
    after: list[str] = Query(default=[], description="table:seq, a mark from an earlier export's "
                                                     "export.json (only newer rows of that table)",
                             json_schema_extra={"items": {"type": "string", "pattern": AFTER_PATTERN}}),
) -> TarResponse:
    """The ledger's tables as Parquet (partitioned by UTC day) in a streamed tar, with `export.json` first:
    the rows per table and each table's mark for the next, incremental, export."""
    ctx = context(request)
    req = export_request(since, after)
    reply = await ctx.ask_ledger(subjects.RPC_LEDGER_EXPORT, req, commands.ExportReply, EXPORT_TIMEOUT_S)
    name = f"ledger-{reply.export}.tar"
    return TarResponse(archive(ctx, reply), headers={"content-disposition": f'attachment; filename="{name}"'})

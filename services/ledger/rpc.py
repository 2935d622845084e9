"""The ledger's request/reply subjects (queue group `ledger`): each one a typed handler over `shared.rpc`.

Failures are `RpcFailure`s with an HTTP-like status the gateway passes on: 400 for a body that is not the
command (or a blank name), 404 for an unknown call, 503 while the ledger is still folding (or rebuilding)
past the wait; the SQL view also answers 408 for a query it had to stop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import structlog
from pydantic import BaseModel

from services.ledger import offloads
from services.ledger.ledger import Behind, Ledger
from services.ledger.store import Store
from shared import rpc, subjects
from shared.commands import (
    EvidenceReply,
    EvidenceRequest,
    ExportChunkReply,
    ExportChunkRequest,
    ExportReply,
    ExportRequest,
    JudgedClaimsReply,
    JudgedClaimsRequest,
    LedgerStatus,
    LedgerStatusRequest,
    PacingReply,
    PacingRequest,
    PendingReply,
    PendingRequest,
    QuotaReply,
    QuotaRequest,
    RebuildRequest,
    Rebuilt,
    RecordReply,
    RecordRequest,
    ReportReply,
    ReportRequest,
    SqlReply,
    SqlRequest,
    SuiteResultsReply,
    SuiteResultsRequest,
    UsageReply,
    UsageRequest,
    VerdictReply,
    VerdictRequest,
)
from shared.ids import utcnow


class Handlers:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def verdict(self, req: VerdictRequest) -> VerdictReply:
        if not req.call.strip():
            raise rpc.RpcFailure(400, '"call" must be a call id')
        with structlog.contextvars.bound_contextvars(call=req.call):
            decision = await self.ledger.verdict(req)
        if isinstance(decision, offloads.NotFound):
            raise rpc.RpcFailure(decision.status, decision.message)
        return VerdictReply(recorded=decision.entry)

    async def pending(self, req: PendingRequest) -> PendingReply:
        return PendingReply(pending=await self.ledger.pending(req.calls))

    async def record(self, req: RecordRequest) -> RecordReply:
        if not req.collection.strip():
            raise rpc.RpcFailure(400, '"collection" must name a collection, as bench/<name>')
        aliases = await self.ledger.record(req.collection, req.task)
        return RecordReply(collection=req.collection, task=req.task, aliases=aliases)

    async def quota(self, req: QuotaRequest) -> QuotaReply:
        return await self.ledger.quota()

    async def usage(self, req: UsageRequest) -> UsageReply:
        return UsageReply(rows=await self.ledger.usage(req))

    async def pacing(self, req: PacingRequest) -> PacingReply:
        """L-2 for a caller seeding its windows: every usage published before the question is in."""
        return await self.ledger.read(Store.pacing_history, req.connection, utcnow())

    async def evidence(self, req: EvidenceRequest) -> EvidenceReply:
        """HL-5 for the prober: every event published before the question is folded first."""
        return await self.ledger.read(Store.evidence, req.since)

    async def sql(self, req: SqlRequest) -> SqlReply:
        reply = await self.ledger.sql(req)
        if reply.error is not None:
            raise rpc.RpcFailure(reply.error.status, reply.error.message)
        return reply

    async def suite(self, req: SuiteResultsRequest) -> SuiteResultsReply:
        return await self.ledger.read(Store.suite_results, req.alias)

    async def claims(self, req: JudgedClaimsRequest) -> JudgedClaimsReply:
        return JudgedClaimsReply(rows=await self.ledger.read(Store.judged_claims, req.limit))

    async def report(self, req: ReportRequest) -> ReportReply:
        if req.until <= req.since:
            raise rpc.RpcFailure(400, '"until" must come after "since"')
        return await self.ledger.read(Store.report, req)

    async def export(self, req: ExportRequest) -> ExportReply:
        return await self.ledger.export(req)

    async def export_chunk(self, req: ExportChunkRequest) -> ExportChunkReply:
        try:
            return await self.ledger.export_chunk(req)
        except ValueError as exc:
            raise rpc.RpcFailure(404, str(exc)) from None

    async def rebuild(self, req: RebuildRequest) -> Rebuilt:
        return Rebuilt.model_validate(await self.ledger.rebuild())

    async def status(self, req: LedgerStatusRequest) -> LedgerStatus:
        return LedgerStatus.model_validate(await self.ledger.status())


R = TypeVar("R", bound=BaseModel)


def behind_is_503(handler: Callable[[R], Awaitable[BaseModel]]) -> Callable[[R], Awaitable[BaseModel]]:
    """A ledger that is behind (or rebuilding) answers 503: asking again later will do."""

    async def run(req: R) -> BaseModel:
        try:
            return await handler(req)
        except Behind as exc:
            raise rpc.RpcFailure(503, str(exc)) from None

    return run


async def serve(bus: rpc.Bus, ledger: Ledger) -> list[rpc.Subscription]:
    h = Handlers(ledger)
    routes: dict[str, tuple[type[BaseModel], Callable[[Any], Awaitable[BaseModel]]]] = {
        subjects.RPC_LEDGER_VERDICT: (VerdictRequest, h.verdict),
        subjects.RPC_LEDGER_PENDING: (PendingRequest, h.pending),
        subjects.RPC_LEDGER_RECORD: (RecordRequest, h.record),
        subjects.RPC_LEDGER_REBUILD: (RebuildRequest, h.rebuild),
        subjects.RPC_LEDGER_STATUS: (LedgerStatusRequest, h.status),
        subjects.RPC_LEDGER_QUOTA: (QuotaRequest, h.quota),
        subjects.RPC_LEDGER_USAGE: (UsageRequest, h.usage),
        subjects.RPC_LEDGER_SQL: (SqlRequest, h.sql),
        subjects.RPC_LEDGER_PACING: (PacingRequest, h.pacing),
        subjects.RPC_LEDGER_EVIDENCE: (EvidenceRequest, h.evidence),
        subjects.RPC_LEDGER_SUITE: (SuiteResultsRequest, h.suite),
        subjects.RPC_LEDGER_CLAIMS: (JudgedClaimsRequest, h.claims),
        subjects.RPC_LEDGER_REPORT: (ReportRequest, h.report),
        subjects.RPC_LEDGER_EXPORT: (ExportRequest, h.export),
        subjects.RPC_LEDGER_EXPORT_CHUNK: (ExportChunkRequest, h.export_chunk),
    }
    return [
        await rpc.serve(bus, subject, subjects.LEDGER_QUEUE, request_type, behind_is_503(handler))
        for subject, (request_type, handler) in routes.items()
    ]

"""The ledger's request/reply subjects (queue group `ledger`): decode, ask the ledger, encode.

Failures answer `{"ok": false, "error": {"status", "message"}}` with an HTTP-like status the gateway
passes on: 400 for a body that is not the command, 404 for an unknown call, 503 while the ledger is
still folding (or rebuilding) past the wait; the SQL view also answers 408 for a query it had to stop.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from nats.aio.client import Client as NATS
from pydantic import BaseModel, ValidationError

from services.ledger import offloads
from services.ledger.ledger import Behind, Ledger
from services.ledger.store import Store
from shared import bus, subjects
from shared.commands import (
    PacingRequest,
    PendingReply,
    PendingRequest,
    QuotaRequest,
    RecordReply,
    RecordRequest,
    RpcError,
    SqlRequest,
    UsageReply,
    UsageRequest,
    VerdictReply,
    VerdictRequest,
)
from shared.ids import utcnow


def failure(status: int, message: str) -> bytes:
    return json.dumps({"ok": False, "error": {"status": status, "message": message}}).encode()


def bad_request(exc: ValidationError) -> bytes:
    errors = exc.errors()
    if not errors:
        return failure(400, "invalid request")
    where = ".".join(str(p) for p in errors[0]["loc"]) or "body"
    return failure(400, f"{where}: {errors[0]['msg']}")


def _dump(model: BaseModel) -> bytes:
    return model.model_dump_json(by_alias=True).encode()


class Handlers:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def verdict(self, data: bytes) -> bytes:
        req = VerdictRequest.model_validate_json(data, strict=True)
        if not req.call.strip():
            return failure(400, '"call" must be a call id')
        with structlog.contextvars.bound_contextvars(call=req.call):
            decision = await self.ledger.verdict(req)
        if isinstance(decision, offloads.NotFound):
            error = RpcError(status=decision.status, message=decision.message)
            return _dump(VerdictReply(ok=False, error=error))
        return _dump(VerdictReply(ok=True, recorded=decision.entry))

    async def pending(self, data: bytes) -> bytes:
        req = PendingRequest.model_validate_json(data, strict=True)
        return _dump(PendingReply(pending=await self.ledger.pending(req.calls)))

    async def record(self, data: bytes) -> bytes:
        req = RecordRequest.model_validate_json(data, strict=True)
        if not req.collection.strip():
            return failure(400, '"collection" must name a collection, as bench/<name>')
        aliases = await self.ledger.record(req.collection, req.task)
        return _dump(RecordReply(collection=req.collection, task=req.task, aliases=aliases))

    async def quota(self, data: bytes) -> bytes:
        QuotaRequest.model_validate_json(data or b"{}", strict=True)
        return _dump(await self.ledger.quota())

    async def usage(self, data: bytes) -> bytes:
        req = UsageRequest.model_validate_json(data or b"{}", strict=True)
        return _dump(UsageReply(rows=await self.ledger.usage(req)))

    async def pacing(self, data: bytes) -> bytes:
        """L-2 for a caller seeding its windows: every usage published before the question is in."""
        req = PacingRequest.model_validate_json(data, strict=True)
        return _dump(await self.ledger.read(Store.pacing_history, req.connection, utcnow()))

    async def sql(self, data: bytes) -> bytes:
        req = SqlRequest.model_validate_json(data, strict=True)
        return _dump(await self.ledger.sql(req))

    async def rebuild(self, data: bytes) -> bytes:
        return json.dumps(await self.ledger.rebuild()).encode()

    async def status(self, data: bytes) -> bytes:
        return json.dumps(await self.ledger.status()).encode()


def guarded(handler: Callable[[bytes], Awaitable[bytes]]) -> Callable[[bytes], Awaitable[bytes]]:
    """Map a malformed body to 400 and a ledger that is behind to 503; anything else stays a 500."""

    async def run(data: bytes) -> bytes:
        try:
            return await handler(data)
        except ValidationError as exc:
            return bad_request(exc)
        except Behind as exc:
            return failure(503, str(exc))

    return run


async def serve(nc: NATS, ledger: Ledger) -> list[Any]:
    h = Handlers(ledger)
    routes = {
        subjects.RPC_LEDGER_VERDICT: h.verdict,
        subjects.RPC_LEDGER_PENDING: h.pending,
        subjects.RPC_LEDGER_RECORD: h.record,
        subjects.RPC_LEDGER_REBUILD: h.rebuild,
        subjects.RPC_LEDGER_STATUS: h.status,
        subjects.RPC_LEDGER_QUOTA: h.quota,
        subjects.RPC_LEDGER_USAGE: h.usage,
        subjects.RPC_LEDGER_SQL: h.sql,
        subjects.RPC_LEDGER_PACING: h.pacing,
    }
    return [await bus.serve_rpc(nc, subj, subjects.LEDGER_QUEUE, guarded(fn)) for subj, fn in routes.items()]

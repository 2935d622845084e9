"""What the pages read: the admin API's own handlers (so a page shows what `/api/*` answers) and the
ledger's tables over the bus. A service that is away leaves its part of a page empty with a note saying
so, never a 500."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from nats.js.errors import NoKeysError
from pydantic import BaseModel
from starlette.requests import Request

from services.console.context import context
from services.console.routes import admin_onboard
from shared import subjects
from shared.commands import (
    PendingReply,
    PendingRequest,
    SqlReply,
    SqlRequest,
    SuiteResultsReply,
    SuiteResultsRequest,
)
from shared.config_rules.base import Invalid
from shared.onboarding import OnboardRequest
from shared.refusal import Refusal
from shared.transcripts import CALL_ID

Reply = TypeVar("Reply", bound=BaseModel)
QUEUE_READ_S = 5.0  # a page shows a note rather than wait the queue route's two minutes for a prober
CANDIDATES_READ_S = 30.0  # every endpoint's list is asked, through a caller
T = TypeVar("T")

VERDICT_STATS = ("SELECT alias, count(*) FILTER (WHERE useful), count(*) FROM (SELECT call, "
                 "arg_max(alias, seq) AS alias, arg_max(useful, seq) AS useful FROM verdicts GROUP BY call) "
                 "GROUP BY alias")
RECENT_PANELS = ('WITH recent AS (SELECT panel, "at", collection FROM panels WHERE "at" IS NOT NULL '
                 'ORDER BY "at" DESC LIMIT {limit}) SELECT r.panel, r."at", r.collection, s.call, s.seat, '
                 's.alias, s.status, s.seconds FROM recent r LEFT JOIN seats s ON s.panel = r.panel '
                 'ORDER BY r."at" DESC, r.panel, s.seat')
PANEL_COUNT = "SELECT count(*) FROM panels"
JOB_RUNS = 'SELECT "at", job, mode, outcome, summary, instance FROM job_runs ORDER BY "at" DESC LIMIT 200'
PROBES = ('SELECT "at", alias, kind, answered, failure, seconds, detail FROM probes ORDER BY "at" DESC '
          "LIMIT 200")
SEAT = ("SELECT s.call, s.alias, s.status, s.answer, s.error, p.prompt FROM seats s LEFT JOIN panels p "
        "ON p.panel = s.panel WHERE s.call = '{call}'")
LATEST_VERDICT = ("SELECT useful, note, real_claims, false_claims FROM verdicts WHERE call = '{call}' "
                  "ORDER BY seq DESC LIMIT 1")


@dataclass
class Notes:
    """Why part of a page is empty (a service away), shown on the page."""

    items: list[str] = field(default_factory=list)

    async def get(self, what: str, read: Awaitable[T], empty: T) -> T:
        try:
            return await read
        except Refusal as refusal:
            self.items.append(f"{what}: {refusal.message}")
            return empty
        except Invalid as invalid:  # a prober that answered with a refusal
            self.items.append(f"{what}: {'; '.join(invalid.errors)}")
            return empty


async def ledger(request: Request, subject: str, req: BaseModel, reply_type: type[Reply]) -> Reply:
    return await context(request).ask_ledger(subject, req, reply_type)


async def sql(request: Request, text: str, max_rows: int = 10_000) -> list[list[Any]]:
    reply = await ledger(request, subjects.RPC_LEDGER_SQL, SqlRequest(sql=text, max_rows=max_rows), SqlReply)
    if reply.error is not None:
        raise Refusal(reply.error.status, reply.error.message)
    return reply.rows


def when(value: Any) -> datetime | None:
    """A time as the ledger's JSON gives it (ISO text) as a datetime."""
    if isinstance(value, datetime) or value is None:
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


async def verdict_stats(request: Request) -> dict[str, tuple[int, int]]:
    return {alias: (int(useful), int(judged)) for alias, useful, judged in await sql(request, VERDICT_STATS)}


async def suite_scores(request: Request) -> dict[str, tuple[int, int]]:
    reply = await ledger(request, subjects.RPC_LEDGER_SUITE, SuiteResultsRequest(), SuiteResultsReply)
    return {line.alias: (line.found, line.of) for line in reply.models}


async def suite_results(request: Request) -> SuiteResultsReply:
    return await ledger(request, subjects.RPC_LEDGER_SUITE, SuiteResultsRequest(), SuiteResultsReply)


async def panel_count(request: Request) -> int:
    rows = await sql(request, PANEL_COUNT)
    return int(rows[0][0]) if rows else 0


async def recent_panels(request: Request, limit: int = 30) -> tuple[list[list[Any]], list[str]]:
    """The latest panels' seats, and which of their calls the ledger still waits a verdict for."""
    rows = [[r[0], when(r[1]), *r[2:]] for r in await sql(request, RECENT_PANELS.format(limit=int(limit)))]
    return rows, await pending_of(request, [r[3] for r in rows if r[3]])


async def pending_of(request: Request, calls: list[str]) -> list[str]:
    if not calls:
        return []
    reply = await ledger(request, subjects.RPC_LEDGER_PENDING, PendingRequest(calls=calls), PendingReply)
    return reply.pending


def is_call_id(text: str) -> bool:
    return CALL_ID.fullmatch(text) is not None


async def seat(request: Request, call: str) -> dict[str, Any] | None:
    """One seat's answer and its panel's prompt, with its latest verdict; None when the ledger has none.
    Only a well-formed call id reaches the SQL text (CALL_ID holds no quote)."""
    if not is_call_id(call):
        return None
    rows = await sql(request, SEAT.format(call=call), 1)
    if not rows:
        return None
    call_, alias, status, answer, error, prompt = rows[0]
    verdicts = await sql(request, LATEST_VERDICT.format(call=call), 1)
    useful, note, real, false = verdicts[0] if verdicts else (None, "", [], [])
    return {"call": call_, "alias": alias, "status": status, "answer": answer, "error": error,
            "prompt": (prompt or "")[:20_000], "useful": useful, "note": note or "", "real": real or [],
            "false": false or []}


async def reminders(request: Request) -> dict[str, list[str]]:
    """MCP-3: the seats each agent session was reminded of (session hash → call ids), from the bucket every
    replica shares."""
    kv = await context(request).js.key_value(subjects.REMINDERS_BUCKET)
    try:
        keys = await kv.keys()
    except NoKeysError:
        return {}
    sessions: dict[str, list[str]] = {}
    for key in keys:
        session, _, call = key.partition(".")
        sessions.setdefault(session, []).append(call)
    return sessions



async def onboard_queue(request: Request) -> dict[str, Any]:
    return await admin_onboard.ask(request, OnboardRequest(action="status"), QUEUE_READ_S)


async def candidates(request: Request) -> dict[str, Any]:
    return await admin_onboard.ask(request, OnboardRequest(action="candidates"), CANDIDATES_READ_S)

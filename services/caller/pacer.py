"""Pacing before each provider request (SPEC L-2a), shared by every caller replica through the
`bench_limits` bucket: read the connection's windows, decide, and take the slot with compare-and-set.

A lost race is simply decided again; a wait re-reads the windows at least every 5 s. A limit whose scope
the windows have not counted yet is seeded first from the ledger's history (`seeding`), once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import structlog

from services.caller import pacing, seeding
from services.caller.limit_book import LimitBook
from services.caller.outcome import Paced
from services.caller.quota_headers import Quota
from services.caller.window_store import WindowStore
from shared.commands import PacingReply, SeatCall

log = structlog.get_logger("caller")

INFLIGHT_GRACE_S = 60.0  # L-2: an in-flight slot expires at the call's deadline + 60 s
WRITE_TRIES = 200


class History(Protocol):
    """What a connection was sent, as the ledger knows it (None: no answer, go on unseeded)."""

    async def fetch(self, connection: str) -> PacingReply | None: ...


@dataclass(frozen=True)
class Ticket:
    connection: str
    alias: str
    slot: str


@dataclass(frozen=True)
class Admission:
    paced: Paced
    waited_s: float = 0.0
    refusal: str = ""
    ticket: Ticket | None = None  # None: nothing binds this call, so no slot was taken


class Pacer:
    """`history` is the ledger (None: windows count only what callers take from now on)."""

    def __init__(self, store: WindowStore, book: LimitBook, history: History | None = None,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.store, self.book, self.history, self.clock, self.sleep = store, book, history, clock, sleep

    async def admit(self, call: SeatCall, tokens: int, slot: str) -> Admission:
        limits = self.book.limits_for(call.connection, call.alias)
        started, waited, lost = self.clock(), False, 0
        history: PacingReply | None = None
        asked = False  # the ledger is asked at most once per admission, and only for an unseeded scope
        while lost < WRITE_TRIES:
            doc, revision = await self.store.read(call.connection)
            now = self.clock()
            pacing.tidy(doc, now)
            unseeded = seeding.to_seed(doc, limits, call.alias) is not None
            if self.history is not None and unseeded and not asked:
                history, asked = await self.history.fetch(call.connection), True
                continue  # the windows may have moved while the ledger answered
            changed = seeding.refresh(doc, limits, call.alias, history, now)
            paced: Literal["sent", "waited"] = "waited" if waited else "sent"
            if not limits and not doc.quotas_of(call.alias, now):
                if changed and not await self.store.write(call.connection, doc, revision):
                    lost += 1
                    continue
                return Admission(paced, now - started)
            decision = pacing.decide(doc, limits, call.alias, tokens, now, call.deadline)
            if decision.kind != "admit" and changed:  # the seeded windows are for every replica
                if not await self.store.write(call.connection, doc, revision):
                    lost += 1
                    continue
            if decision.kind == "refuse" and decision.block is not None:
                return Admission("refused", now - started, pacing.refusal_text(decision.block, now))
            if decision.kind == "wait":
                waited = True
                log.info("call_paced", alias=call.alias, connection=call.connection,
                         wait_s=round(decision.at - now, 2))
                await self.sleep(max(0.0, decision.at - now))
                continue
            pacing.take(doc, call.alias, tokens, now, call.deadline + INFLIGHT_GRACE_S, slot, call.call)
            if await self.store.write(call.connection, doc, revision):
                return Admission(paced, now - started, ticket=Ticket(call.connection, call.alias, slot))
            lost += 1
        raise RuntimeError("bench_limits: no write won after many tries")

    async def settle(self, call: SeatCall, ticket: Ticket | None, tokens: int, quotas: list[Quota],
                     sent_at: float | None = None) -> None:
        """An attempt is over: its tokens replace the estimate, its window starts when it was sent (if
        known), and the quotas it reported are kept."""
        if ticket is None and not quotas:
            return
        for _ in range(WRITE_TRIES):
            doc, revision = await self.store.read(call.connection)
            pacing.tidy(doc, self.clock())
            if ticket is not None:
                pacing.settle(doc, ticket.slot, tokens, sent_at)
            pacing.remember(doc, call.alias, quotas)
            if await self.store.write(call.connection, doc, revision):
                return
        raise RuntimeError("bench_limits: no write won after many tries")

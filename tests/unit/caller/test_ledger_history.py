"""Asking the ledger for a connection's history: one question at a time per connection, and after a
failure (no answer, or the ledger still folding) quiet for a while: a ledger away costs no call its turn."""

from __future__ import annotations

import asyncio

from nats.errors import NoRespondersError

from services.caller.ledger_history import QUIET_AFTER_FAILURE_S, LedgerHistory
from shared import rpc, subjects
from shared.commands import PacingReply
from tests.unit.fake_bus import FakeBus

OK = PacingReply(at=1.0, rows=[(1.0, "a", 1, 2, "p.member1")], month="2026-12", month_requests=1)


async def test_calls_arriving_together_share_one_question() -> None:
    nc = FakeBus(OK.model_dump_json().encode())
    nc.gate.clear()
    history = LedgerHistory(nc)
    waiting = [asyncio.create_task(history.fetch("groq")) for _ in range(5)]
    await asyncio.sleep(0)
    nc.gate.set()
    assert await asyncio.gather(*waiting) == [OK] * 5
    assert nc.asked == [(subjects.RPC_LEDGER_PACING, b'{"connection":"groq"}')]


async def test_after_a_failure_the_connection_is_not_asked_again_for_a_while() -> None:
    now = [100.0]
    ok = OK.model_dump_json().encode()
    folding = b'{"error":{"status":503,"message":"still folding"}}'
    nobody = [NoRespondersError() for _ in rpc.NO_RESPONDERS_RETRY_S]  # every retry too
    nc = FakeBus(*nobody, NoRespondersError(), ok, folding, ok)
    history = LedgerHistory(nc, clock=lambda: now[0])
    assert await history.fetch("groq") is None
    tries = len(nobody) + 1
    assert await history.fetch("groq") is None and len(nc.asked) == tries  # quiet: not asked
    assert await history.fetch("other") == OK  # another connection is asked on its own
    now[0] += QUIET_AFTER_FAILURE_S
    assert await history.fetch("groq") is None and len(nc.asked) == tries + 2  # a 503 is no answer either
    now[0] += QUIET_AFTER_FAILURE_S
    assert await history.fetch("groq") == OK and len(nc.asked) == tries + 3

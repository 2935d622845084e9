"""Asking the ledger for a connection's history: one question at a time per connection, and after a
failure (no answer, or the ledger still folding) quiet for a while: a ledger away costs no call its turn."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from nats.errors import NoRespondersError

from services.caller.ledger_history import QUIET_AFTER_FAILURE_S, LedgerHistory
from shared import subjects
from shared.commands import PacingReply


@dataclass
class Reply:
    data: bytes


class FakeNats:
    """Answers each request with the next of `answers` once `gate` opens (an exception is raised)."""

    def __init__(self, *answers: Any) -> None:
        self.answers: list[Any] = list(answers)
        self.asked: list[tuple[str, bytes]] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def request(self, subject: str, payload: bytes, timeout: float) -> Reply:
        self.asked.append((subject, payload))
        await self.gate.wait()
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return Reply(answer)


OK = PacingReply(at=1.0, rows=[(1.0, "a", 1, 2, "p.member1")], month="2026-12", month_requests=1)


async def test_calls_arriving_together_share_one_question() -> None:
    nc = FakeNats(OK.model_dump_json().encode())
    nc.gate.clear()
    history = LedgerHistory(nc)  # type: ignore[arg-type]
    waiting = [asyncio.create_task(history.fetch("groq")) for _ in range(5)]
    await asyncio.sleep(0)
    nc.gate.set()
    assert await asyncio.gather(*waiting) == [OK] * 5
    assert nc.asked == [(subjects.RPC_LEDGER_PACING, b'{"connection":"groq"}')]


async def test_after_a_failure_the_connection_is_not_asked_again_for_a_while() -> None:
    now = [100.0]
    ok = OK.model_dump_json().encode()
    folding = b'{"ok":false,"error":{"status":503,"message":"still folding"}}'
    nc = FakeNats(NoRespondersError(), ok, folding, ok)
    history = LedgerHistory(nc, clock=lambda: now[0])  # type: ignore[arg-type]
    assert await history.fetch("groq") is None
    assert await history.fetch("groq") is None and len(nc.asked) == 1  # quiet: not asked
    assert await history.fetch("other") == OK  # another connection is asked on its own
    now[0] += QUIET_AFTER_FAILURE_S
    assert await history.fetch("groq") is None and len(nc.asked) == 3  # a 503 is no answer either
    now[0] += QUIET_AFTER_FAILURE_S
    assert await history.fetch("groq") == OK and len(nc.asked) == 4

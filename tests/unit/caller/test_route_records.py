"""A route call's records after its end: a good call's usage line waits a beat (`records_after_s`), so the
turn's end and the agent's next turn go first; a failure's news (a cooldown) goes at once, so no other turn
picks the member meanwhile. Either way the end frame is on the bus before any record."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from services.caller.config_wait import ConfigWait
from services.caller.limit_book import LimitBook
from services.caller.outcome import CallOutcome, CallReport, Usage
from services.caller.route_call import Stop
from services.caller.route_events import RouteReport
from services.caller.route_relay import RouteRelay
from shared.config_state import ConfigState
from tests.unit.caller.test_route_events import route_call
from tests.unit.fake_bus import FakeBus

LONG_S = 30.0  # far longer than the test: a record that waits for it is still waiting at the check


class Bus(FakeBus):
    """The fake connection, with a JetStream side writing to the same log: the order of frames and records."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []
        self.ended = asyncio.Event()

    async def publish(
        self, subject: str, payload: bytes = b"", reply: str = "", headers: dict[str, str] | None = None
    ) -> None:
        kind = json.loads(payload)["kind"]
        self.log.append(f"frame:{kind}")
        if kind in ("end", "fail"):
            self.ended.set()
        await super().publish(subject, payload, reply, headers)

    def jetstream(self) -> SimpleNamespace:
        return SimpleNamespace(publish=self.record)

    async def record(self, subject: str, payload: bytes, headers: dict[str, str], timeout: float) -> Any:
        self.log.append(f"event:{json.loads(payload)['type']}")
        return SimpleNamespace(seq=len(self.log))


@dataclass
class Caller:
    """Answers every call with `outcome`, at once."""

    outcome: CallOutcome

    async def call(self, *args: Any, **kwargs: Any) -> RouteReport:
        return RouteReport(CallReport(self.outcome, 1, self.outcome.usage, 0.2))


class Folded:
    seq = 10**9

    async def wait_for(self, seq: int, timeout: float = 0.0) -> None:
        return None


def relay_for(bus: Bus, outcome: CallOutcome, records_after_s: float) -> RouteRelay:
    return RouteRelay(bus, Caller(outcome), LimitBook(ConfigState()), "caller-1",  # type: ignore[arg-type]
                      ConfigWait(Folded()), records_after_s=records_after_s)


async def test_a_good_calls_usage_waits_a_beat_after_the_end() -> None:
    bus = Bus()
    relay = relay_for(bus, CallOutcome(text="hi", usage=Usage(3, 1)), LONG_S)
    task = asyncio.create_task(relay._run(route_call(), Stop(), 0.0))
    await bus.ended.wait()
    for _ in range(20):  # every loop turn the record could have taken, had it not waited
        await asyncio.sleep(0)
    assert bus.log == ["frame:end"] and not task.done()
    task.cancel()


async def test_with_no_wait_the_usage_follows_the_end() -> None:
    bus = Bus()
    relay = relay_for(bus, CallOutcome(text="hi", usage=Usage(3, 1)), 0.0)
    await relay._run(route_call(), Stop(), 0.0)
    assert bus.log == ["frame:end", "event:call_used"]


async def test_a_failures_cooldown_goes_at_once() -> None:
    bus = Bus()
    relay = relay_for(bus, CallOutcome(error="HTTP 429: rate limit exceeded, retry after 20 seconds"), LONG_S)
    await asyncio.wait_for(relay._run(route_call(), Stop(), 0.0), LONG_S / 3)
    assert bus.log == ["frame:fail", "event:call_used", "event:cooldown_started"]

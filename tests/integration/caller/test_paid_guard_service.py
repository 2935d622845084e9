"""U-5 in a real caller process: a `went paid` alert folded from the stream holds the model (nothing sent,
a refused seat with no attempt, no rest); a caller started with BENCH_ALLOW_PAID=1 calls it anyway.

The alert is stored before each caller starts, and a caller folds the configuration before it takes any
call, so which caller sees what is certain."""

from __future__ import annotations

from collections.abc import Callable

from shared import bus, subjects
from shared.alerts import paid_key
from shared.events import AlertRaised, CooldownStarted, decode_event
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import (
    caller_env,
    completion_of,
    seat_call,
    send,
    stored_events,
)

SERVED = "pg-went-paid"
PRICED = "listed with a price now ($0.20/M in), 429 rate limit"  # words that would otherwise rest it


def sent_to(provider: FakeProvider) -> int:
    return sum(1 for r in provider.requests() if r["body"].get("model") == SERVED)


async def test_a_held_model_is_not_called_unless_the_caller_allows_paid(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    await bus.publish_event(nc.jetstream(), AlertRaised(id="cfg:pg1", key=paid_key(SERVED), kind="went paid",
                                                        message=PRICED, by="admin"))
    guarded = callers(caller_env())
    before = sent_to(provider)
    held = seat_call(provider, SERVED, seat="member1")
    await send(nc, held)
    event = await completion_of(nc, held)
    assert event.error.startswith(f"Error: client failed: not sent: the free-tier guard holds alias-{SERVED}")
    assert "payment required" in event.error and PRICED in event.error
    assert (event.status, event.attempts, event.paced) == ("error", 0, "refused")
    assert sent_to(provider) == before
    guarded.stop()  # after its call's events are all published
    stored = [decode_event(raw) for raw in await stored_events(nc, subjects.LIMITS_ALL)]
    assert not [e for e in stored if isinstance(e, CooldownStarted)]

    callers({**caller_env(), "BENCH_ALLOW_PAID": "1"})
    allowed = seat_call(provider, SERVED, seat="member2")
    await send(nc, allowed)
    event = await completion_of(nc, allowed)
    assert (event.status, event.attempts, event.paced) == ("ok", 1, "sent")
    assert sent_to(provider) == before + 1

"""Read-your-config in a real caller process: a call carries the config position it was built on, and the
caller decides it only once its own config fold got there.

The race is made certain by ordering: the call is queued with the position the next event will take, the
test waits until a caller holds the call (a seat: the work queue's consumer has it unacked; a route call: it
was accepted), and only then stores the `went paid` alert at that position. A caller that decided at once
would already have sent the call to the provider; one that waits sees the alert and holds the model.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from services.gateway.route_mode.relay import RelayHub
from shared import bus, subjects
from shared.alerts import paid_key
from shared.commands import RelayFrame, RouteCall
from shared.events import AlertRaised
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import (
    caller_env,
    completion_of,
    seat_call,
    send,
    wait_until,
)

PRICED = "listed with a price now ($0.20/M in)"
HELD = "Error: client failed: not sent: the free-tier guard holds"


def sent_to(provider: FakeProvider, served: str) -> int:
    return sum(1 for r in provider.requests() if r["body"].get("model") == served)


async def next_position(nc: bus.NATS) -> int:
    """The stream sequence the next event will be stored at (nothing else publishes in these tests)."""
    return int((await nc.jetstream().stream_info(subjects.EVENTS_STREAM)).state.last_seq) + 1


async def raise_paid_alert(nc: bus.NATS, served: str, at: int) -> None:
    alert = AlertRaised(id=f"cfg:{served}", key=paid_key(served), kind="went paid", message=PRICED,
                        by="admin")
    ack = await nc.jetstream().publish(subjects.CONFIG, alert.model_dump_json().encode(),
                                       headers={"Nats-Msg-Id": alert.id})
    assert ack.seq == at  # the position the call was built on


async def held_by_a_caller(nc: bus.NATS) -> bool:
    info = await nc.jetstream().consumer_info(subjects.CALLS_STREAM, subjects.CALLERS_CONSUMER)
    return int(info.num_ack_pending) == 1


async def test_a_seat_call_is_decided_on_the_config_it_was_built_on(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    served = "cp-seat"
    callers(caller_env())
    at = await next_position(nc)
    call = seat_call(provider, served, config_seq=at)
    await send(nc, call)
    await wait_until(lambda: held_by_a_caller(nc))
    await raise_paid_alert(nc, served, at)
    event = await completion_of(nc, call)
    assert event.error.startswith(f"{HELD} alias-{served}") and PRICED in event.error
    assert (event.status, event.attempts, event.paced) == ("error", 0, "refused")
    assert sent_to(provider, served) == 0


async def test_a_route_call_is_decided_on_the_config_it_was_built_on(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    served = "cp-route"
    callers(caller_env())
    at = await next_position(nc)
    hub = RelayHub(nc, "test-gateway")
    relay = await hub.open()
    conv = "r20261202-000000-c0f9"
    call = RouteCall(call=f"{conv}.t1.1", conversation=conv, turn=1, alias=f"alias-{served}", served=served,
                     endpoint="fake", base=provider.base_url, connection="fake", collection="code",
                     body={"messages": [{"role": "user", "content": "hi"}]}, relay=relay.relay,
                     first_piece_s=30, deadline=time.time() + 60, config_seq=at)
    try:
        assert await relay.ask(call) == ""  # accepted: the caller holds the call
        await raise_paid_alert(nc, served, at)
        frame = await relay.next(20)
        while isinstance(frame, RelayFrame) and frame.kind == "beat":
            frame = await relay.next(20)
    finally:
        relay.close()
        await hub.close()
    assert isinstance(frame, RelayFrame) and frame.kind == "fail" and frame.outcome is not None
    assert frame.outcome.error.startswith(f"{HELD} alias-{served}")
    assert (frame.outcome.attempts, frame.outcome.paced) == (0, "refused")
    assert sent_to(provider, served) == 0


async def test_a_config_position_that_never_comes_delays_the_call_only_briefly(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    served = "cp-never"
    caller = callers(caller_env())
    asked = await next_position(nc) + 1000
    call = seat_call(provider, served, config_seq=asked)
    await send(nc, call)
    event = await completion_of(nc, call)
    assert (event.status, event.attempts) == ("ok", 1)
    warned = [e for e in caller.log_events() if e.get("event") == "config_not_caught_up"]
    assert [(e["asked"], e["call"]) for e in warned] == [(asked, call.call)]

"""The caller as a real process on a real NATS: SeatCall in on `bench.calls.<call>`, SeatCompleted out."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from shared import bus, subjects
from shared.commands import SeatCall
from shared.events import CooldownStarted, LimitLearned, QuotaObserved, SeatCompleted, decode_event
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess

KEY = "sk-live-KEYVALUE-5e1f0c2a9b"
PANEL = "p20261202-120000-abcd"


def seat_call(provider: FakeProvider, served: str, seat: str = "member1", **over: Any) -> SeatCall:
    fields: dict[str, Any] = {
        "call": f"{PANEL}.{seat}",
        "panel": PANEL,
        "seat": "member",
        "alias": f"alias-{served}",
        "served": served,
        "endpoint": "fake",
        "base": provider.base_url,
        "connection": "fake",
        "collection": "code",
        "messages": [{"role": "user", "content": "Say hello"}],
        "deadline": time.time() + 60,
        "timeout_s": 60.0,
    }
    fields.update(over)
    return SeatCall.model_validate(fields)


async def send(nc: bus.NATS, call: SeatCall) -> None:
    await nc.jetstream().publish(
        subjects.call_subject(call.call),
        call.model_dump_json().encode(),
        headers={"Nats-Msg-Id": f"call:{call.call}"},
    )


async def completion_of(nc: bus.NATS, call: SeatCall, within: float = 20.0) -> SeatCompleted:
    """The stored SeatCompleted of a call (waits for it to land in BENCH_EVENTS)."""
    js = nc.jetstream()
    end = time.monotonic() + within
    while True:
        try:
            raw = await js.get_last_msg(subjects.EVENTS_STREAM, subjects.seat_subject(call.call))
            event = decode_event(raw.data or b"")
            assert isinstance(event, SeatCompleted)
            return event
        except Exception:
            if time.monotonic() > end:
                raise
            await asyncio.sleep(0.05)


async def stored_events(nc: bus.NATS, subject: str = subjects.EVENTS_ALL) -> list[bytes]:
    js = nc.jetstream()
    info = await js.stream_info(subjects.EVENTS_STREAM)
    sub = await js.subscribe(subject, ordered_consumer=True, stream=subjects.EVENTS_STREAM)
    found: list[bytes] = []
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=1.0)
            except TimeoutError:
                return found
            found.append(msg.data)
            if msg.metadata.sequence.stream >= info.state.last_seq:
                return found
    finally:
        await sub.unsubscribe()


async def calls_left(nc: bus.NATS) -> int:
    info = await nc.jetstream().stream_info(subjects.CALLS_STREAM)
    return int(info.state.messages)


async def wait_until(check: Callable[[], Any], within: float = 20.0) -> Any:
    end = time.monotonic() + within
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > end:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.05)


def caller_env() -> dict[str, str]:
    return {"BENCHWARMERS_KEY_FAKE": KEY, "BENCHWARMERS_KEY_FAKE_GEMINI": KEY}


async def test_a_seat_call_becomes_one_seat_completed(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    caller = callers(caller_env())
    call = seat_call(provider, "s-ok")
    live = await nc.subscribe(subjects.seats_of_panel(PANEL))  # the gateway's view: a core subscription
    await send(nc, call)
    msg = await live.next_msg(timeout=20)
    event = decode_event(msg.data)
    assert isinstance(event, SeatCompleted)
    assert event.id == f"seat:{call.call}" and event.status == "ok" and event.answer == "s-ok says: Say hello"
    assert (event.alias, event.connection, event.collection, event.attempts) == (
        "alias-s-ok",
        "fake",
        "code",
        1,
    )
    assert event.tokens_in > 0 and event.tokens_out > 0 and not event.tokens_estimated
    assert event.caller == caller.instance and event.http_status == 200
    assert (await completion_of(nc, call)).id == event.id  # the same event is stored
    assert await wait_until(lambda: _zero(nc))  # acked: the work queue is empty


async def _zero(nc: bus.NATS) -> bool:
    return await calls_left(nc) == 0


async def test_rate_limit_is_retried_then_rests_the_model(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    provider.set_model("s-429", behaviour="rate_limit", retry_after=0.3)
    callers(caller_env())
    call = seat_call(provider, "s-429")
    await send(nc, call)
    event = await completion_of(nc, call)
    assert event.status == "error" and event.attempts == 3 and event.http_status == 429  # 2 more tries
    assert event.error.startswith("Error: Error code: 429 - ") and "Retry-After: 0.3" in event.error

    async def limit_events() -> list[Any]:  # published right after the completion, not with it
        found = [decode_event(raw) for raw in await stored_events(nc, subjects.limit_subject("fake"))]
        return found if len(found) >= 3 else []

    limits = await wait_until(limit_events)
    [cooldown] = [e for e in limits if isinstance(e, CooldownStarted)]
    assert cooldown.alias == "alias-s-429"
    assert 0 < (cooldown.until - event.at).total_seconds() <= 2
    assert cooldown.id == f"cool:alias-s-429:{cooldown.until.isoformat()}"
    [learned] = [e for e in limits if isinstance(e, LimitLearned)]  # "Limit 30 … requests per min"
    assert (learned.alias, learned.axis, learned.limit) == ("alias-s-429", "rpm", 30)
    [quota] = [e for e in limits if isinstance(e, QuotaObserved)]  # L-4: the last 429's records
    assert {(r.metric, r.window, r.remaining) for r in quota.records} == {
        ("requests", "minute", 0),
        ("requests", "retry", 0),
    }


async def test_the_key_reaches_the_provider_and_nothing_else(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    provider.set_model("s-echo", behaviour="echo_auth")
    caller = callers({**caller_env(), "BENCH_LOG_LEVEL": "DEBUG"})
    echoed, fine = (
        seat_call(provider, "s-echo", seat="member1"),
        seat_call(provider, "s-fine", seat="member2"),
    )
    await send(nc, echoed)
    await send(nc, fine)
    assert "Bearer [redacted]" in (await completion_of(nc, echoed)).error
    assert (await completion_of(nc, fine)).status == "ok"
    sent = [r for r in provider.requests() if r["body"]["model"] in ("s-echo", "s-fine")]
    assert sent and all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in sent)
    events = await stored_events(nc)
    assert len(events) >= 2 and not [e for e in events if KEY.encode() in e]
    assert "call_finished" in caller.log() and KEY not in caller.log()


async def test_a_call_past_its_deadline_is_not_sent(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    callers(caller_env())
    call = seat_call(provider, "s-late", deadline=time.time() - 1, timeout_s=420.0)
    await send(nc, call)
    event = await completion_of(nc, call)
    assert (event.status, event.error, event.attempts) == ("error", "no answer in 420s", 0)
    assert not [r for r in provider.requests() if r["body"]["model"] == "s-late"]


async def test_sigterm_lets_a_call_in_flight_finish(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    provider.set_model("s-slowish", latency_ms=1500)
    caller = callers(caller_env())
    call = seat_call(provider, "s-slowish")
    await send(nc, call)
    await wait_until(lambda: [r for r in provider.requests() if r["body"]["model"] == "s-slowish"])
    assert await asyncio.to_thread(caller.stop) == 0
    event = await completion_of(nc, call, within=5)
    assert event.status == "ok" and event.caller == caller.instance


@pytest.mark.slow
async def test_a_caller_killed_mid_call_loses_nothing(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    """Invariant 3: the seat completes through the other caller, and exactly one SeatCompleted is stored."""
    provider.set_model("s-slow", latency_ms=3000)
    debug = {**caller_env(), "BENCH_LOG_LEVEL": "DEBUG"}  # `call_started` tells which caller holds the call
    first, second = callers(debug), callers(debug)
    call = seat_call(provider, "s-slow")
    await send(nc, call)
    await wait_until(lambda: [r for r in provider.requests() if r["body"]["model"] == "s-slow"])
    holder, other = await wait_until(lambda: holder_of(call, first, second))
    holder.kill()
    event = await completion_of(nc, call, within=30)
    assert event.status == "ok" and event.caller == other.instance
    assert len([r for r in provider.requests() if r["body"]["model"] == "s-slow"]) == 2  # it was called again
    await wait_until(lambda: _zero(nc))
    stored = [json.loads(e) for e in await stored_events(nc, subjects.seat_subject(call.call))]
    assert len(stored) == 1 and stored[0]["caller"] == other.instance


async def test_a_call_handed_out_again_after_its_answer_was_stored_is_not_paid_twice(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    """As after NATS was killed before saving which calls it had handed out: the call comes again as a first
    delivery, stored before the caller's connection began, while its answer is already in BENCH_EVENTS."""
    call = seat_call(provider, "s-answered")
    earlier = SeatCompleted(id=f"seat:{call.call}", call=call.call, panel=call.panel, seat=call.seat,
                            alias=call.alias, served=call.served, endpoint=call.endpoint,
                            connection=call.connection, status="ok", seconds=0.3, answer="from before")
    await bus.publish_event(nc.jetstream(), earlier)
    await send(nc, call)
    caller = callers(caller_env())
    assert await wait_until(lambda: _zero(nc))  # taken and acked
    assert not [r for r in provider.requests() if r["body"]["model"] == "s-answered"]
    assert (await completion_of(nc, call)).answer == "from before"
    assert [e["delivered"] for e in caller.log_events() if e.get("event") == "call_already_answered"] == [1]


async def test_a_call_handed_out_again_without_an_answer_is_made(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    """The look finds nothing (its caller died before publishing): the call is made, once."""
    call = seat_call(provider, "s-unanswered")
    await send(nc, call)
    callers(caller_env())
    assert (await completion_of(nc, call)).status == "ok"
    assert len([r for r in provider.requests() if r["body"]["model"] == "s-unanswered"]) == 1


def holder_of(call: SeatCall, *procs: CallerProcess) -> tuple[CallerProcess, CallerProcess] | None:
    """The caller that logged starting this call, and the other one."""
    for proc in procs:
        if any(e.get("event") == "call_started" and e.get("call") == call.call for e in proc.log_events()):
            others = [p for p in procs if p is not proc]
            return proc, others[0]
    return None


async def test_the_caller_keeps_taking_calls_after_a_nats_restart(
    nats_server: NatsServer, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    caller = callers(caller_env())
    nats_server.restart()
    nc = await bus.connect(nats_server.url, "test-after-restart", nats_server.login("admin"))
    try:
        call = seat_call(provider, "s-restart")
        await wait_until(lambda: "nats_reconnected" in caller.log())
        await send(nc, call)
        event = await completion_of(nc, call, within=30)
        assert event.status == "ok" and event.caller == caller.instance
    finally:
        await nc.close()

"""Limits held across caller replicas (L-1..L-5 on the bus), a panel over all four API kinds, and the model
listing RPC: real NATS, real caller processes, the fake provider."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from services.caller.window_store import WindowStore
from shared import bus, rpc, subjects
from shared.commands import ModelsReply, ModelsRequest, SeatCall
from shared.events import LimitsSaved, SeatCompleted, decode_event
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess, endpoint_of
from tests.integration.caller.test_caller_service import KEY, caller_env, send, stored_events, wait_until

REFUSED = "Error: client failed: rate limit (not sent; paced by the bench): "


def seat(provider: FakeProvider, panel: str, n: int, served: str, connection: str, **over: Any) -> SeatCall:
    api = over.pop("api", "chat")
    fields: dict[str, Any] = {
        "call": f"{panel}.member{n}",
        "panel": panel,
        "seat": "member",
        "alias": f"alias-{served}",
        "served": served,
        "endpoint": endpoint_of(api),
        "base": provider.base_for(api),
        "api": api,
        "connection": connection,
        "messages": [{"role": "user", "content": f"question {n}"}],
        "deadline": time.time() + 60,
        "timeout_s": 60.0,
    }
    fields.update(over)
    return SeatCall.model_validate(fields)


async def completions(nc: bus.NATS, panel: str, count: int, within: float = 60.0) -> list[SeatCompleted]:
    """Every SeatCompleted stored for the panel, once there are `count` of them."""

    async def stored() -> list[SeatCompleted] | None:
        events = [decode_event(raw) for raw in await stored_events(nc, subjects.seats_of_panel(panel))]
        found = [e for e in events if isinstance(e, SeatCompleted)]
        return found if len(found) >= count else None

    found: list[SeatCompleted] = await wait_until(stored, within)
    return found


def most_in_a_minute(times: list[float]) -> int:
    return max((len([t for t in times if start <= t < start + 60]) for start in times), default=0)


async def test_three_callers_never_send_more_than_30_a_minute_and_account_for_all_100(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    await bus.publish_event(
        nc.jetstream(), LimitsSaved(id="cfg:rpm30", scope="connection", name="paced", rpm=30)
    )
    started = [callers(caller_env()) for _ in range(3)]
    panel = "p20261202-130000-aaaa"
    models = [f"rpm-{m}" for m in "abcd"]
    deadline = time.time() + 12  # short: what cannot go within it is refused, not held for a minute
    calls = [
        seat(provider, panel, n, models[n % 4], "paced", deadline=deadline, timeout_s=12.0)
        for n in range(1, 101)
    ]
    await asyncio.gather(*(send(nc, c) for c in calls))
    events = await completions(nc, panel, 100)
    assert sorted(e.call for e in events) == sorted(c.call for c in calls)  # exactly one usage event each
    sent = [e for e in events if e.attempts > 0]
    refused = [e for e in events if e.paced == "refused"]
    assert len(sent) == 30 and len(refused) == 70 and all(e.status == "ok" for e in sent)
    assert all(e.attempts == 0 and e.status == "error" for e in refused)
    assert all(
        e.error.startswith(
            REFUSED + "connection paced allows 30 requests per minute (your limit) "
            "and 30 were used; try again in "
        )
        for e in refused
    )
    received = [r["at"] for r in provider.requests() if r["model"] in models]
    assert len(received) == 30 and most_in_a_minute(received) <= 30
    assert len({e.caller for e in events}) >= 2 and {e.caller for e in events} <= {
        c.instance for c in started
    }


async def test_a_429_with_retry_after_holds_every_replica_until_the_reset(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    provider.set_model("q-429", behaviour="rate_limit", retry_after=2, times=1)
    for _ in range(3):
        callers(caller_env())
    panel = "p20261202-130000-bbbb"
    first = seat(provider, panel, 1, "q-429", "quota")
    await send(nc, first)
    store = await WindowStore.open(nc)

    async def quota_held() -> bool:
        doc, _ = await store.read("quota")
        return bool(doc.quotas_of("alias-q-429", time.time()))

    await wait_until(quota_held)
    await store.close()  # the 429's records are in the bucket: every replica now sees them
    others = [seat(provider, panel, n, "q-429", "quota") for n in range(2, 8)]
    await asyncio.gather(*(send(nc, c) for c in others))
    events = {e.call: e for e in await completions(nc, panel, 7)}
    assert all(e.status == "ok" for e in events.values()) and events[first.call].attempts == 2
    assert all(events[c.call].paced == "waited" and events[c.call].attempts == 1 for c in others)
    [rate_limited, *after] = sorted(r["at"] for r in provider.requests() if r["model"] == "q-429")
    assert len(after) == 7 and min(after) - rate_limited >= 2.0  # nobody called before the reset
    kv = await nc.jetstream().key_value(subjects.LIMITS_BUCKET)
    values = [(await kv.get(key)).value or b"" for key in await kv.keys()]
    assert values and not [v for v in values if KEY.encode() in v]  # SEC-6: no key in the bucket


async def test_a_panel_over_all_four_api_kinds_answers_four_times(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    callers(caller_env())
    panel = "p20261202-130000-cccc"
    calls = [
        seat(provider, panel, n, f"mix-{api}", f"mix-{api}", api=api)
        for n, api in enumerate(("chat", "anthropic", "gemini", "responses"), 1)
    ]
    await asyncio.gather(*(send(nc, c) for c in calls))
    events = {e.call: e for e in await completions(nc, panel, 4)}
    for n, call in enumerate(calls, 1):
        event = events[call.call]
        assert (event.status, event.answer) == ("ok", f"{call.served} says: question {n}"), event.error
        assert event.tokens_in > 0 and event.tokens_out > 0 and not event.tokens_estimated
        assert (event.served_by, event.swap, event.paced, event.attempts) == (call.served, False, "sent", 1)


async def test_callers_answer_the_model_listing_for_each_kind(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    callers(caller_env())
    provider.set_model("list-a")

    async def listing(api: str, **over: str) -> ModelsReply:
        req = ModelsRequest.model_validate(
            {"endpoint": endpoint_of(api), "base": provider.base_for(api), "api": api, **over}
        )
        return await rpc.call(nc, subjects.RPC_CALLER_MODELS, req, ModelsReply)

    chat, anthropic, gemini = await listing("chat"), await listing("anthropic"), await listing("gemini")
    assert "list-a" in [m.id for m in chat.models] and "fake-hidden" not in [m.id for m in chat.models]
    assert ("list-a", "LIST-A") in [(m.id, m.name) for m in anthropic.models]
    ids = [m.id for m in gemini.models]
    assert "list-a" in ids and "text-embedding-004" not in ids and not [i for i in ids if "/" in i]
    assert [m.context_window for m in gemini.models if m.id == "list-a"] == [1048576]
    asked = {
        (r["path"], r["query"]): r["headers"] for r in provider.requests() if r["path"].endswith("/models")
    }
    assert asked[("/v1/models", "")]["authorization"] == f"Bearer {KEY}"
    assert asked[("/v1/models", "limit=1000")]["x-api-key"] == KEY
    assert asked[("/v1/models", "limit=1000")]["anthropic-version"] == "2023-06-01"
    assert asked[("/v1beta/models", "pageSize=1000")]["x-goog-api-key"] == KEY
    with pytest.raises(rpc.RpcFailure) as missing:
        await listing("chat", endpoint="elsewhere", base="https://models.invalid/v1")
    assert missing.value.message == "Error: client failed: missing key: set BENCHWARMERS_KEY_ELSEWHERE"
    assert KEY not in json.dumps([chat.model_dump(), missing.value.message])

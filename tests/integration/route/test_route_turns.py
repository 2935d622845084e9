"""Route turns across the bus (RM-3..RM-6, RM-9): a real seater ranks, a real caller relays the fake
provider's stream, the gateway's route side walks the members, and everything lands in the stream.

Each test has its own collection and models (the fake's behaviours are per model), so they share one bus."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import timedelta
from typing import Any

from services.gateway.route_mode.conversation import Conversation
from services.gateway.route_mode.prepared import Done, Failed, Pieces
from services.gateway.route_mode.relay import RelayHub
from shared import bus, subjects
from shared.commands import RelayFrame, RouteCall
from shared.events import CollectionSaved, CooldownStarted, EndpointSaved, ModelRegistered
from shared.ids import utcnow
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider
from tests.fakes.route_tools import PARALLEL_CALLS, interleaved_tool_deltas
from tests.integration.route.conftest import FIRST_PIECE_S
from tests.integration.route.services import Gateway, relayed, stored

TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
         for _, name, _ in PARALLEL_CALLS]


async def bench(gw: Gateway, fake: FakeProvider, *behaviours: str, shadows: list[str] | None = None) -> str:
    """A collection of one member per behaviour (m1, m2, …, in that order), each its own served model."""
    tag = uuid.uuid4().hex[:6]
    members = [f"{tag}-m{i}" for i in range(1, len(behaviours) + 1)]
    for alias, behaviour in zip(members, behaviours, strict=True):
        fake.set_model(alias, behaviour)
    registered = [ModelRegistered(id=f"cfg:{uuid.uuid4().hex}", alias=alias, served=alias, endpoint="fake",
                                  tools=True, max_output=500) for alias in [*members, *(shadows or [])]]
    await gw.configure(
        EndpointSaved(id=f"cfg:{uuid.uuid4().hex}", name="fake", base=fake.base_url), *registered,
        CollectionSaved(id=f"cfg:{uuid.uuid4().hex}", name=tag, members=members, reply="route",
                        shadows=shadows or []),
    )
    return tag


def asked(tag: str, first: str = "list the tests", **extra: Any) -> dict[str, Any]:
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": first}]
    return {"model": f"bench/{tag}", "messages": messages, "tools": TOOLS, **extra}


def upstream_deltas(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    return [call for delta in deltas for call in delta.get("tool_calls") or []]


async def usage_line(gw: Gateway, call: str) -> Any:
    return (await stored(gw.ctx.nc, subjects.usage_subject("fake"), {f"used:{call}"}))[f"used:{call}"]


async def test_a_turn_relays_the_members_chunks_and_is_recorded(gateway: Gateway, fake: FakeProvider) -> None:
    tag = await bench(gateway, fake, "parallel_tools", "ok")
    plan, updates = await gateway.turn(asked(tag))
    done = updates[-1]
    assert isinstance(done, Done) and done.alias == f"{tag}-m1"
    assert upstream_deltas(relayed(updates)) == interleaved_tool_deltas()  # as the member sent them
    assert [(c.id, c.name, c.arguments) for c in done.summary.tool_calls] == list(PARALLEL_CALLS)
    conv = plan.conversation.id
    assert (done.bench["conversation"], done.bench["call"], done.bench["turn"]) == (conv, f"{conv}.1", 1)
    ids = (f"used:{conv}.t1.1", f"turn:{conv}:1", f"seat:{conv}.1")
    events = await stored(gateway.ctx.nc, "bench.ev.>", set(ids))
    used, turn, offload = (events[i] for i in ids)
    assert (used.type, used.status, used.alias, used.purpose) == ("call_used", "ok", f"{tag}-m1", "route")
    assert (turn.type, turn.status, turn.tool_calls, turn.alias) == ("route_turn", "ok", 2, f"{tag}-m1")
    assert (offload.type, offload.purpose, offload.seat, offload.panel) == (
        "seat_completed", "route", "route", conv)
    stored_record, _ = await gateway.desk.store.read(plan.key)
    assert stored_record is not None and (stored_record.model, stored_record.turns) == (f"{tag}-m1", 1)


async def test_a_rate_limited_member_is_failed_over_invisibly_and_rests(
    gateway: Gateway, fake: FakeProvider
) -> None:
    tag = await bench(gateway, fake, "rate_limit", "ok")
    plan, updates = await gateway.turn(asked(tag))
    done = updates[-1]
    assert isinstance(done, Done) and done.alias == f"{tag}-m2"
    assert all(isinstance(u, Pieces) and u.alias == f"{tag}-m2" for u in updates[:-1])  # nothing of m1 shown
    failed = done.bench["failed_over"]
    assert [f["alias"] for f in failed] == [f"{tag}-m1"] and "429" in failed[0]["error"]
    conv = plan.conversation.id
    used = await usage_line(gateway, f"{conv}.t1.1")
    assert (used.status, used.http_status, used.attempts) == ("error", 429, 1)  # a non-last member: no retry
    rest = await cooldowns_of(gateway, f"{tag}-m1")  # its id carries its end: found by alias
    assert rest and rest[0].until > utcnow()


async def cooldowns_of(gw: Gateway, alias: str) -> list[CooldownStarted]:
    found: list[CooldownStarted] = []
    for _ in range(50):
        sub = await gw.ctx.js.subscribe(subjects.limit_subject("fake"), ordered_consumer=True,
                                        stream=subjects.EVENTS_STREAM)
        try:
            while True:
                try:
                    msg = await sub.next_msg(timeout=0.3)
                except TimeoutError:
                    break
                data = json.loads(msg.data)
                if data.get("type") == "cooldown_started" and data["alias"] == alias:
                    found.append(CooldownStarted.model_validate(data))
        finally:
            await sub.unsubscribe()
        if found:
            return found
        await asyncio.sleep(0.2)
    return found


async def test_a_silent_member_is_failed_over_after_its_window(gateway: Gateway, fake: FakeProvider) -> None:
    tag = await bench(gateway, fake, "hang", "ok")
    plan, updates = await gateway.turn(asked(tag))
    done = updates[-1]
    assert isinstance(done, Done) and done.alias == f"{tag}-m2"
    assert done.bench["failed_over"][0]["error"].startswith(f"nothing in {FIRST_PIECE_S:g}s")
    conv = plan.conversation.id
    used = await usage_line(gateway, f"{conv}.t1.1")
    assert used.status == "error" and used.error.startswith(f"nothing in {FIRST_PIECE_S:g}s")


async def test_an_empty_reply_is_failed_over_but_the_last_members_is_its_answer(
    gateway: Gateway, fake: FakeProvider
) -> None:
    tag = await bench(gateway, fake, "empty", "empty")
    _, updates = await gateway.turn(asked(tag))
    done = updates[-1]
    assert isinstance(done, Done) and done.alias == f"{tag}-m2" and done.summary.empty
    assert [f["alias"] for f in done.bench["failed_over"]] == [f"{tag}-m1"]


async def test_every_member_failing_keeps_the_status(gateway: Gateway, fake: FakeProvider) -> None:
    tag = await bench(gateway, fake, "rate_limit", "rate_limit")
    _, updates = await gateway.turn(asked(tag))
    broke = updates[-1]
    assert len(updates) == 1 and isinstance(broke, Failed) and broke.status == 429
    assert broke.message.startswith(f"no member of bench/{tag} answered: {tag}-m1: ")
    tag = await bench(gateway, fake, "rate_limit", "error_500")
    _, updates = await gateway.turn(asked(tag))
    broke = updates[-1]
    assert len(updates) == 1 and isinstance(broke, Failed) and broke.status == 502


async def test_a_failure_after_the_first_piece_breaks_the_turn(gateway: Gateway, fake: FakeProvider) -> None:
    tag = await bench(gateway, fake, "midstream_error", "ok")
    _, updates = await gateway.turn(asked(tag))
    broke = updates[-1]
    assert any(isinstance(u, Pieces) for u in updates)  # the member went live: no other may continue it
    assert isinstance(broke, Failed) and broke.status == 502 and "failed part way" in broke.message


async def test_a_member_the_gateway_gave_up_on_is_stopped(gateway: Gateway, fake: FakeProvider) -> None:
    tag = await bench(gateway, fake, "hang")
    hub = RelayHub(gateway.ctx.nc, gateway.ctx.instance)
    relay = await hub.open()
    conv = f"r20261202-000000-{tag[:4]}"
    body = {"messages": [{"role": "user", "content": "hi"}]}
    call = RouteCall(call=f"{conv}.t1.1", conversation=conv, turn=1, alias=f"{tag}-m1", served=f"{tag}-m1",
                     endpoint="fake", base=fake.base_url, connection="fake", collection=tag, body=body,
                     relay=relay.relay, first_piece_s=60, deadline=utcnow().timestamp() + 120)
    try:
        assert await relay.ask(call) == ""
        await asyncio.sleep(0.3)  # the caller is waiting on the hanging member
        await relay.cancel()
        frame = await relay.next(10)
    finally:
        relay.close()
        await hub.close()
    assert isinstance(frame, RelayFrame) and frame.kind == "fail" and frame.outcome is not None
    assert frame.outcome.error.startswith("stopped: the gateway moved on")
    assert (await usage_line(gateway, call.call)).status == "error"


async def test_one_subscription_hears_every_relay_and_a_cancel_stops_only_its_own_call(
    gateway: Gateway, fake: FakeProvider
) -> None:
    tag = await bench(gateway, fake, "hang")
    fake.set_model(f"{tag}-slow", "ok", latency_ms=800)
    hub = RelayHub(gateway.ctx.nc, gateway.ctx.instance)
    subscribed = len(gateway.ctx.nc._subs)
    hanging, slow = await hub.open(), await hub.open()
    assert len(gateway.ctx.nc._subs) == subscribed + 1  # one wildcard subscription for both relays

    def call(relay: str, served: str, n: int) -> RouteCall:
        conv = f"r20261202-000000-{tag[:4]}"
        return RouteCall(call=f"{conv}.t{n}.1", conversation=conv, turn=n, alias=served, served=served,
                         endpoint="fake", base=fake.base_url, connection="fake", collection=tag,
                         body={"messages": [{"role": "user", "content": "hi"}]}, relay=relay,
                         first_piece_s=60, deadline=utcnow().timestamp() + 120)

    async def last_frame(relay: Any) -> Any:
        frame = await relay.next(20)
        while isinstance(frame, RelayFrame) and frame.kind in ("beat", "chunks"):
            frame = await relay.next(20)
        return frame

    try:
        assert await hanging.ask(call(hanging.relay, f"{tag}-m1", 1)) == ""
        assert await slow.ask(call(slow.relay, f"{tag}-slow", 2)) == ""
        await hanging.cancel()
        stopped, ended = await asyncio.gather(last_frame(hanging), last_frame(slow))
    finally:
        hanging.close()
        slow.close()
        await hub.close()
    assert isinstance(stopped, RelayFrame) and stopped.kind == "fail" and stopped.outcome is not None
    assert stopped.outcome.error.startswith("stopped: the gateway moved on")
    assert isinstance(ended, RelayFrame) and ended.kind == "end"  # every frame in order, none of the other


async def test_two_replicas_share_the_conversation_table(
    gateway: Gateway, gateway_b: Gateway, fake: FakeProvider
) -> None:
    tag = await bench(gateway, fake, "ok", "ok", "ok")
    await gateway_b.ctx.projection.wait_for(gateway.ctx.projection.seq)
    plan_a, updates_a = await gateway.turn(asked(tag))
    body = asked(tag)
    body["messages"] += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "and now?"}]
    plan_b, updates_b = await gateway_b.turn(body)
    first, second = updates_a[-1], updates_b[-1]
    assert isinstance(first, Done) and isinstance(second, Done)
    assert plan_b.conversation.id == plan_a.conversation.id and second.alias == first.alias
    assert (second.bench["turn"], second.bench["call"]) == (2, f"{plan_a.conversation.id}.1")


async def test_replicas_opening_one_conversation_at_once_agree_on_it(
    gateway: Gateway, gateway_b: Gateway, fake: FakeProvider
) -> None:
    tag = await bench(gateway, fake, "ok", "ok")
    await gateway_b.ctx.projection.wait_for(gateway.ctx.projection.seq)
    (plan_a, _), (plan_b, _) = await asyncio.gather(
        gateway.turn(asked(tag)), gateway_b.turn(asked(tag)))
    assert plan_a.conversation.id == plan_b.conversation.id
    # The turns' records are written once their clients have the end: wait for the turns' tasks.
    if running := gateway.desk.running | gateway_b.desk.running:
        await asyncio.wait(running, timeout=10)
    # From the server: A's mirror of the bucket may not have B's write yet (its writes are compare-and-set).
    entry = await (await gateway.desk.store.kv()).get(plan_a.key)
    record = Conversation.from_json(entry.value or b"")
    assert record.turns == 2  # both turns counted, neither lost to the other


async def test_the_conversation_bucket_forgets_after_an_idle_hour(gateway: Gateway) -> None:
    status = await (await gateway.desk.store.kv()).status()
    assert status.ttl == 3600


async def test_a_resting_member_is_ranked_last_by_the_seater(
    gateway: Gateway, fake: FakeProvider, route_nats: NatsServer
) -> None:
    tag = await bench(gateway, fake, "ok", "ok")
    rest = CooldownStarted(id=f"cool:{tag}", alias=f"{tag}-m1", connection="fake",
                           until=utcnow() + timedelta(minutes=10))
    caller_side = await bus.connect(route_nats.url, "test-cooldown", route_nats.login("caller"))
    try:  # a caller records a cooldown; the gateway may not
        await bus.publish_event(caller_side.jetstream(), rest)
    finally:
        await caller_side.close()
    for _ in range(50):  # the seater folds it a moment later
        plan, updates = await gateway.turn(asked(tag, first=f"question {uuid.uuid4().hex}"))
        if plan.seating.order[0] == f"{tag}-m2":
            break
        await asyncio.sleep(0.1)
    assert plan.seating.order == [f"{tag}-m2", f"{tag}-m1"]
    assert isinstance(updates[-1], Done) and updates[-1].alias == f"{tag}-m2"


async def test_shadow_members_answer_the_turn_in_the_background(gateway: Gateway, fake: FakeProvider) -> None:
    shadow = f"{uuid.uuid4().hex[:6]}-shadow"
    fake.set_model(shadow, "ok", latency_ms=300)
    tag = await bench(gateway, fake, "ok", shadows=[shadow])
    plan, updates = await gateway.turn(asked(tag))
    assert isinstance(updates[-1], Done)
    conv = plan.conversation.id
    seat_id = f"seat:{conv}.shadow1.t1"
    done = (await stored(gateway.ctx.nc, f"bench.ev.seat.{conv}.>", {seat_id}))[seat_id]
    assert (done.purpose, done.alias, done.status, done.panel) == ("shadow", shadow, "ok", conv)
    assert done.answer.startswith(f"{shadow} says: list the tests")


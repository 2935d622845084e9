"""The bus helpers against a real NATS server."""

from __future__ import annotations

import asyncio

import pytest

from shared import bus, subjects
from shared.config_state import ConfigState
from shared.events import CollectionSaved, EndpointSaved, Event
from shared.ids import PANEL_RE, candidate_id


async def test_provision_is_idempotent(nc: bus.NATS) -> None:
    js = nc.jetstream()
    await bus.provision(js)
    await bus.provision(js)
    info = await js.stream_info(subjects.EVENTS_STREAM)
    assert info.config.duplicate_window == bus.EVENT_DUPLICATE_WINDOW_S


async def test_same_event_id_is_stored_once(nc: bus.NATS) -> None:
    js = nc.jetstream()
    event = EndpointSaved(id="ep:local:1", name="local", base="http://127.0.0.1:1/v1")
    first = await bus.publish_event(js, event)
    second = await bus.publish_event(js, event)
    assert first == second
    info = await js.stream_info(subjects.EVENTS_STREAM)
    assert info.state.messages == 1


async def test_projection_reads_its_own_writes(nc: bus.NATS) -> None:
    js = nc.jetstream()
    await bus.publish_event(js, EndpointSaved(id="e1", name="local", base="http://x/v1"))
    state = ConfigState()

    def fold(event: Event, seq: int) -> None:
        state.apply(event, seq)

    proj = bus.Projection(js, subjects.CONFIG, fold)
    await proj.start()
    assert "local" in state.endpoints
    seq = await bus.publish_event(js, CollectionSaved(id="c1", name="core", members=["a"]))
    await proj.wait_for(seq)
    assert state.collections["core"].members == ["a"]
    await proj.stop()


async def test_stale_config_write_is_refused(nc: bus.NATS) -> None:
    js = nc.jetstream()

    def endpoint(n: str) -> EndpointSaved:
        return EndpointSaved(id=f"e-{n}", name=n, base="http://x/v1")

    seq = await bus.publish_event(js, endpoint("a"), expected_last_subject_seq=0)
    await bus.publish_event(js, endpoint("b"), expected_last_subject_seq=seq)
    with pytest.raises(Exception, match="wrong last sequence"):
        await bus.publish_event(js, endpoint("c"), expected_last_subject_seq=seq)


async def test_reserved_ids_never_collide(nc: bus.NATS) -> None:
    js = nc.jetstream()
    draws = iter(["p20260101-000000-aaaa", "p20260101-000000-aaaa", "p20260101-000000-bbbb"])
    first = await bus.reserve_id(js, lambda: next(draws))
    second = await bus.reserve_id(js, lambda: next(draws))
    assert (first, second) == ("p20260101-000000-aaaa", "p20260101-000000-bbbb")
    many = await asyncio.gather(*(bus.reserve_id(js, lambda: candidate_id("p")) for _ in range(300)))
    assert len(set(many)) == 300
    assert all(PANEL_RE.match(p) for p in many)

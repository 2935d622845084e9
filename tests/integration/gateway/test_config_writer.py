"""Config writes on a real NATS: read your writes, and two replicas never both win on stale state.

Replica B's projection is held back by a gate in its fold, so B validates against configuration that is one
event behind: its publish (expected last subject sequence) is refused by the server, B catches up, checks
again, and either writes on top or refuses with the reason the newer configuration gives.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from structlog.testing import capture_logs

from shared import bus, subjects
from shared.config_rules import base as rules
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.events import CollectionSaved, Event


@dataclass
class Replica:
    state: ConfigState
    projection: bus.Projection
    writer: ConfigWriter
    gate: asyncio.Event


async def replica(nc: bus.NATS, name: str) -> Replica:
    js = nc.jetstream()
    state = ConfigState()
    gate = asyncio.Event()
    gate.set()

    async def fold(event: Event, seq: int) -> None:
        await gate.wait()
        state.apply(event, seq)

    projection = bus.Projection(js, subjects.CONFIG, fold, name=name)
    await projection.start()
    return Replica(state, projection, ConfigWriter(js, projection, state), gate)


@pytest.fixture
async def replicas(nc: bus.NATS) -> AsyncIterator[tuple[Replica, Replica]]:
    a, b = await replica(nc, "a"), await replica(nc, "b")
    await a.writer.write(rules.save_endpoint({"name": "fake", "base": "https://x.example/v1"}))
    for served in ("m1", "m2", "m3", "m4"):
        await a.writer.write(rules.register_model({"served": served, "endpoint": "fake"}))
    await b.projection.wait_for(a.projection.seq)
    try:
        yield a, b
    finally:
        await a.projection.stop()
        await b.projection.stop()


async def test_a_write_is_folded_before_it_answers(replicas: tuple[Replica, Replica]) -> None:
    a, _ = replicas
    event = await a.writer.write(rules.save_collection({"name": "core", "members": ["m1", "m2"]}))
    assert isinstance(event, CollectionSaved)
    assert a.state.collections["core"].members == ["m1", "m2"]  # no wait: the writer waited for the fold
    assert event.id.startswith("cfg:") and event.by == "admin"


async def test_a_stale_replica_checks_again_and_refuses(replicas: tuple[Replica, Replica]) -> None:
    a, b = replicas
    b.gate.clear()  # B stops folding: it will validate against max_calls 5
    await a.writer.write(rules.save_settings({"max_calls": 3}))
    assert b.state.max_calls == 5
    write = asyncio.create_task(
        b.writer.write(rules.save_collection({"name": "big", "members": ["m1", "m2", "m3", "m4"]}))
    )
    await asyncio.sleep(0)  # B has validated on stale state and is publishing
    with capture_logs() as logs:
        b.gate.set()
        with pytest.raises(rules.Invalid) as refused:
            await asyncio.wait_for(write, 10)
    assert [e["event"] for e in logs].count("config_write_raced") == 1  # refused by the server, not by B
    assert any("more than max_calls (3)" in e for e in refused.value.errors)
    assert "big" not in a.state.collections and "big" not in b.state.collections


async def test_a_stale_replica_writes_on_top_when_still_valid(replicas: tuple[Replica, Replica]) -> None:
    a, b = replicas
    b.gate.clear()
    await a.writer.write(rules.save_collection({"name": "first", "members": ["m1"]}))
    write = asyncio.create_task(b.writer.write(rules.save_collection({"name": "second", "members": ["m2"]})))
    await asyncio.sleep(0)
    with capture_logs() as logs:
        b.gate.set()
        await asyncio.wait_for(write, 10)
    assert [e["event"] for e in logs].count("config_write_raced") == 1
    await a.projection.wait_for(b.projection.seq)
    assert set(a.state.collections) == set(b.state.collections) == {"first", "second"}

"""Invariant 3 in route mode: a caller that dies while its member is live is noticed in seconds, not at the
turn's deadline, and the turn ends with the format's error rather than a clean end or endless keep-alives."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.gateway.route_mode.prepared import Failed, Pieces
from shared.commands import RELAY_SILENCE_S
from shared.events import CollectionSaved, EndpointSaved, ModelRegistered
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider
from tests.integration.route.conftest import settings
from tests.integration.route.services import Gateway
from tests.integration.service_process import ServiceProcess


@pytest.fixture
def own_caller(route_nats: NatsServer, tmp_path: Path) -> Iterator[ServiceProcess]:
    """A caller of this test's own (the module's shared caller must outlive the other tests), and a seater
    to seat its turns."""
    seater = ServiceProcess("seater", route_nats, tmp_path, {}).start()
    try:
        caller = ServiceProcess("caller", route_nats, tmp_path, {"BENCHWARMERS_KEY_FAKE": "sk-test"}).start()
        try:
            yield caller
        finally:
            caller.stop()
    finally:
        seater.stop()


async def test_a_dead_callers_live_turn_breaks_within_a_few_beats(
    route_nats: NatsServer, fake: FakeProvider, own_caller: ServiceProcess
) -> None:
    gw = await Gateway.open(route_nats, "gateway-death", settings())
    try:
        tag = uuid.uuid4().hex[:6]
        alias = f"{tag}-m1"
        fake.set_model(alias, "stall")
        await gw.configure(
            EndpointSaved(id=f"cfg:{uuid.uuid4().hex}", name="fake", base=fake.base_url),
            ModelRegistered(id=f"cfg:{uuid.uuid4().hex}", alias=alias, served=alias, endpoint="fake"),
            CollectionSaved(id=f"cfg:{uuid.uuid4().hex}", name=tag, members=[alias], reply="route"),
        )
        turn = asyncio.create_task(gw.turn({"model": f"bench/{tag}", "messages": [
            {"role": "user", "content": "say something long"}]}, within=60))
        await wait_for_request(fake, alias)
        await asyncio.sleep(0.5)  # the first piece has been relayed; the member now stalls
        assert own_caller.proc is not None
        os.kill(own_caller.proc.pid, signal.SIGKILL)
        _, updates = await asyncio.wait_for(turn, RELAY_SILENCE_S + 20)
    finally:
        await gw.close()
    assert any(isinstance(u, Pieces) for u in updates)
    broke = updates[-1]
    assert isinstance(broke, Failed) and "failed part way" in broke.message and "went silent" in broke.message


async def wait_for_request(fake: FakeProvider, model: str) -> None:
    for _ in range(200):
        if any(r["body"].get("model") == model for r in fake.requests()):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{model} was never called")

"""Route mode across the bus: a NATS, a fake provider, and a real seater and caller per module; the gateway's
route side runs in the test process (`services.Gateway`), one or two replicas of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from shared.natsserver import NatsServer
from shared.settings import GatewaySettings
from tests.fakes.provider import FakeProvider
from tests.integration.route.services import Gateway
from tests.integration.service_process import ServiceProcess

FIRST_PIECE_S = 1.5


@pytest.fixture(scope="module")
def route_nats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    server = NatsServer(store=tmp_path_factory.mktemp("nats")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeProvider]:
    provider = FakeProvider(log_path=tmp_path_factory.mktemp("fake") / "provider.log").start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture(scope="module")
def services(
    route_nats: NatsServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, ServiceProcess]]:
    home: Path = tmp_path_factory.mktemp("home")
    env = {"BENCHWARMERS_KEY_FAKE": "sk-test-not-a-real-key"}
    started: dict[str, ServiceProcess] = {}
    try:
        for name in ("seater", "caller"):
            started[name] = ServiceProcess(name, route_nats, home, env).start()
        yield started
    finally:
        for process in started.values():
            process.stop()


def settings() -> GatewaySettings:
    return GatewaySettings(route_first_piece_s=FIRST_PIECE_S, route_grace_s=5.0, keepalive_s=0.5)


@pytest.fixture
async def gateway(route_nats: NatsServer, services: dict[str, ServiceProcess]) -> AsyncIterator[Gateway]:
    gw = await Gateway.open(route_nats, "gateway-a", settings())
    try:
        yield gw
    finally:
        await gw.close()


@pytest.fixture
async def gateway_b(route_nats: NatsServer, services: dict[str, ServiceProcess]) -> AsyncIterator[Gateway]:
    gw = await Gateway.open(route_nats, "gateway-b.example.com", settings())
    try:
        yield gw
    finally:
        await gw.close()

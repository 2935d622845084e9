"""Fixtures shared by every test: a real NATS server of our own, on free ports, with a temporary store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from shared import bus
from shared.natsserver import NatsServer


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(store=tmp_path / "nats").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def nc(nats_server: NatsServer) -> AsyncIterator[bus.NATS]:
    conn = await bus.connect(nats_server.url, "test", nats_server.login("admin"))
    await bus.provision(conn.jetstream())
    try:
        yield conn
    finally:
        await conn.close()

"""The prober's integration fixtures: the caller's (a fake provider, its saved endpoints, real caller
processes) and a bus connection logged in as the prober itself, so its grants are what is tested."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from shared import bus
from shared.natsserver import NatsServer
from tests.integration.caller.conftest import callers, module_nats, provider, saved_endpoints

__all__ = ["callers", "module_nats", "provider", "saved_endpoints"]


@pytest.fixture
async def prober_nc(nats_server: NatsServer, nc: bus.NATS) -> AsyncIterator[bus.NATS]:
    """`nc` (the admin's) provisions the streams and buckets first, as a service does at start."""
    conn = await bus.connect(nats_server.url, "test-prober", nats_server.login("prober"))
    try:
        yield conn
    finally:
        await conn.close()

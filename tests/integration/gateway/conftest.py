"""The played seater and callers, one per test, on the test's own NATS."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from shared import bus
from tests.integration.gateway.played import Bench


@pytest.fixture
async def bench(nc: bus.NATS) -> AsyncIterator[Bench]:
    b = Bench(nc)
    await b.start()
    try:
        yield b
    finally:
        await b.stop()

"""The `ledger` fixture: a ledger process on the test's own NATS, with its home in the test's tmp dir."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared import bus
from shared.natsserver import NatsServer
from tests.integration.ledger.process import LedgerProcess


@pytest.fixture
async def ledger(nats_server: NatsServer, nc: bus.NATS, tmp_path: Path) -> AsyncIterator[LedgerProcess]:
    proc = LedgerProcess(nats_server.url, tmp_path / "home")
    await proc.start(nc)
    try:
        yield proc
    finally:
        proc.stop()

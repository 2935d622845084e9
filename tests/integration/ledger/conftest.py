"""The `ledger` fixture (a ledger process on the test's own NATS, its home in the test's tmp dir) and the
`store` fixture (a DuckDB ledger file of the test's own, no process)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from services.ledger.store import Store
from shared import bus
from shared.natsserver import NatsServer
from tests.integration.ledger.process import LedgerProcess


@pytest.fixture
async def ledger(nats_server: NatsServer, nc: bus.NATS, tmp_path: Path) -> AsyncIterator[LedgerProcess]:
    proc = LedgerProcess(nats_server, tmp_path / "home")
    await proc.start(nc)
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "l.duckdb")
    try:
        yield s
    finally:
        s.close()

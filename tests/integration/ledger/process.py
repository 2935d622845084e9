"""The ledger as a real process (`python -m services.ledger`) on the test's own NATS, stopped by PID, and
the requests and publishes its tests make."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import duckdb

from cli.stack import Child
from services.ledger import schema
from services.ledger.fold import fold_batch
from services.ledger.store import Store
from shared import bus, subjects
from shared.events import EventBase
from shared.natsserver import NatsServer
from shared.subjects import health_subject
from tests.integration.service_process import bus_env

ROOT = Path(__file__).resolve().parents[3]


class LedgerProcess:
    def __init__(self, nats: NatsServer, home: Path, **env: str) -> None:
        self.home = home
        self.db = home / "ledger.duckdb"
        self.env = {**os.environ, **bus_env(nats), "BENCHWARMERS_HOME": str(home), "PYTHONPATH": str(ROOT),
                    "PYTHONUNBUFFERED": "1", **env}
        self.runs = 0
        self.child: Child | None = None

    @property
    def log_path(self) -> Path:
        return self.home / "logs" / f"ledger-{self.runs}.log"

    async def start(self, nc: bus.NATS) -> Child:
        self.runs += 1
        self.child = Child("ledger", self.runs, self.env, self.log_path)
        self.child.start()
        await self._ready(nc)
        return self.child

    async def _ready(self, nc: bus.NATS) -> None:
        """Ready when this very process (its PID ends its instance name) answers the health ping."""
        assert self.child is not None and self.child.proc is not None
        end = time.monotonic() + 60.0
        while time.monotonic() < end:
            if not self.child.alive():
                raise RuntimeError(f"ledger exited: {self.log()[-3000:]}")
            try:
                reply = await nc.request(health_subject("ledger"), b"", timeout=0.5)
            except Exception:  # no responders yet
                await asyncio.sleep(0.05)
                continue
            if json.loads(reply.data)["instance"].endswith(f"-{self.child.proc.pid}"):
                return
        raise RuntimeError(f"ledger not ready: {self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()

    def snapshot(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table, every row, in a fixed order (the ledger must be stopped: it holds the file)."""
        con = duckdb.connect(str(self.db), read_only=True)
        try:
            return {name: con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall()
                    for name in schema.ALL_TABLE_NAMES}
        finally:
            con.close()


async def ask(nc: bus.NATS, subject: str, body: dict[str, Any] | None = None, wait_s: float = 15.0) -> Any:
    reply = await nc.request(subject, json.dumps(body or {}).encode(), timeout=wait_s)
    return json.loads(reply.data)


async def status_when_caught_up(nc: bus.NATS, wait_s: float = 120.0) -> Any:
    """The ledger's status, asking again while it answers 503 (still folding past its own 8 s wait)."""
    end = time.monotonic() + wait_s
    while True:
        status = await ask(nc, subjects.RPC_LEDGER_STATUS, wait_s=max(end - time.monotonic(), 1.0))
        if "seq" in status or status.get("error", {}).get("status") != 503:
            return status
        assert time.monotonic() < end, status

async def publish_all(nc: bus.NATS, events: list[EventBase]) -> int:
    """Publish in order (each with its id as Nats-Msg-Id); returns the last stream sequence."""
    js = nc.jetstream()
    seq = 0
    for event in events:
        seq = await bus.publish_event(js, event)
    return seq


async def stream_messages(nc: bus.NATS) -> int:
    info = await nc.jetstream().stream_info(subjects.EVENTS_STREAM)
    return int(info.state.messages)


def apply_each(store: Store, *events: EventBase) -> None:
    """Each event its own batch, after what the store holds (batches meet rows already stored)."""
    for event in events:
        seq = store.position() + 1
        store.apply(fold_batch([(seq, event)]), seq)

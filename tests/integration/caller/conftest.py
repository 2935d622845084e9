"""The caller's integration fixtures: a shared fake provider (each test uses its own model names), an
in-process `Upstream` paced through a real `bench_limits` bucket, and real caller processes on the test's
own NATS."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from services.caller.keys import KeyStore
from services.caller.limit_book import LimitBook
from services.caller.pacer import Pacer
from services.caller.upstream import Upstream, make_client
from services.caller.window_store import WindowStore
from shared import bus, processes
from shared.config_state import ConfigState
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider

UPSTREAM_KEY = "sk-test-9f8e7d6c5b4a"


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeProvider]:
    log_path: Path = tmp_path_factory.mktemp("fake") / "provider.log"
    fp = FakeProvider(log_path=log_path).start()
    try:
        yield fp
    finally:
        fp.stop()


@pytest.fixture(scope="module")
def module_nats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    server = NatsServer(store=tmp_path_factory.mktemp("nats")).start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Rig:
    """An `Upstream` as a caller builds it, its limit book (to set limits) and the bucket it paces through."""

    upstream: Upstream
    book: LimitBook
    store: WindowStore


@pytest.fixture
async def rig(module_nats: NatsServer) -> AsyncIterator[Rig]:
    nc = await bus.connect(module_nats.url, "test-upstream")
    await bus.provision(nc.jetstream())
    client = make_client(64)
    book = LimitBook(ConfigState())
    store = await WindowStore.open(nc.jetstream())
    keys = KeyStore(env={"BENCHWARMERS_KEY_FAKE": UPSTREAM_KEY})
    try:
        yield Rig(Upstream(client, keys, Pacer(store, book)), book, store)
    finally:
        await client.aclose()
        await nc.close()


ROOT = Path(__file__).resolve().parents[3]


class CallerProcess:
    """`python -m services.caller` as a real process with its own log file, stopped by PID."""

    def __init__(self, nats_url: str, home: Path, index: int, env: dict[str, str]) -> None:
        self.log_path = home / "logs" / f"caller-{index}.log"
        self.env = {
            **os.environ,
            "NATS_URL": nats_url,
            "BENCHWARMERS_HOME": str(home),
            "PYTHONUNBUFFERED": "1",
            "BENCH_ACK_WAIT_S": "2",
            "BENCH_HEARTBEAT_S": "0.5",
            **env,
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 20.0) -> CallerProcess:
        self.proc = processes.spawn([sys.executable, "-m", "services.caller"], self.log_path, env=self.env,
                                    cwd=ROOT)
        if not processes.wait_ready(self.proc, lambda: "service_ready" in self.log(), timeout):
            self.kill()
            raise RuntimeError(f"caller did not start:\n{self.log()[-3000:]}")
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def instance(self) -> str:
        return f"caller-{socket.gethostname()}-{self.pid}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log().splitlines() if line.startswith("{")]

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM and wait; returns the exit code (None when it had to be killed)."""
        return processes.stop(self.proc, timeout)

    def kill(self) -> None:
        processes.kill(self.proc)


@pytest.fixture
def callers(nats_server: NatsServer, tmp_path: Path) -> Iterator[Callable[..., CallerProcess]]:
    """Start callers on the test's NATS: `callers(env={...})`; every one is stopped afterwards."""
    started: list[CallerProcess] = []

    def start(env: dict[str, str] | None = None) -> CallerProcess:
        proc = CallerProcess(nats_server.url, tmp_path / "home", len(started), env or {})
        started.append(proc)
        return proc.start()

    try:
        yield start
    finally:
        for proc in started:
            proc.stop()

"""The caller's integration fixtures: a shared fake provider (each test uses its own model names), an
in-process `Upstream` paced through a real `bench_limits` bucket, and real caller processes on the test's
own NATS."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.caller.keys import KeyStore
from services.caller.limit_book import LimitBook
from services.caller.pacer import Pacer
from services.caller.upstream import Upstream, make_transport
from services.caller.window_store import WindowStore
from shared import bus
from shared.config_state import ConfigState
from shared.events import EndpointSaved
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider
from tests.integration.service_process import ServiceProcess

UPSTREAM_KEY = "sk-test-9f8e7d6c5b4a"
# The fake's endpoints, saved as the admin API saves them (a caller sends a key only to an endpoint's saved
# base): Gemini's native API has a base of its own.
GEMINI_ENDPOINT = "fake-gemini"


def endpoint_of(api: str) -> str:
    return GEMINI_ENDPOINT if api == "gemini" else "fake"


def fake_endpoints(provider: FakeProvider) -> list[EndpointSaved]:
    return [EndpointSaved(id=f"cfg:{endpoint_of(api)}", name=endpoint_of(api), base=provider.base_for(api),
                          api=api) for api in ("chat", "gemini")]


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

    def save(self, name: str, base: str) -> None:
        """An endpoint saved in the caller's config fold: calls may name it at `base`."""
        self.book.config.apply(EndpointSaved(id=f"cfg:{name}", name=name, base=base))


@pytest.fixture
async def rig(module_nats: NatsServer, provider: FakeProvider) -> AsyncIterator[Rig]:
    nc = await bus.connect(module_nats.url, "test-upstream", module_nats.login("admin"))
    await bus.provision(nc.jetstream())
    transport = make_transport(64)
    book = LimitBook(ConfigState())
    for endpoint in fake_endpoints(provider):
        book.config.apply(endpoint)
    store = await WindowStore.open(nc)
    keys = KeyStore(env={"BENCHWARMERS_KEY_FAKE": UPSTREAM_KEY, "BENCHWARMERS_KEY_FAKE_GEMINI": UPSTREAM_KEY})
    try:
        yield Rig(Upstream(transport, keys, Pacer(store, book)), book, store)
    finally:
        await store.close()
        await transport.aclose()
        await nc.close()


class CallerProcess(ServiceProcess):
    """`python -m services.caller` with short ack and heartbeat periods, logging to `caller-<index>.log`."""

    def __init__(self, nats: NatsServer, home: Path, index: int, env: dict[str, str]) -> None:
        periods = {"BENCH_ACK_WAIT_S": "2", "BENCH_HEARTBEAT_S": "0.5"}
        super().__init__("caller", nats, home, {**periods, **env}, log_name=f"caller-{index}")

    def start(self, timeout: float = 20.0) -> CallerProcess:
        return super().start(timeout)

    @property
    def instance(self) -> str:
        return f"caller-{socket.gethostname()}-{self.pid}"

    def stop(self, timeout: float = 15.0) -> int | None:
        return super().stop(timeout)


@pytest.fixture
async def saved_endpoints(nc: bus.NATS, provider: FakeProvider) -> list[EndpointSaved]:
    """The fake's endpoints stored on the test's bus before any caller starts (so every caller has folded
    them before it takes a call)."""
    saved = fake_endpoints(provider)
    for endpoint in saved:
        await bus.publish_event(nc.jetstream(), endpoint)
    return saved


@pytest.fixture
def callers(
    nats_server: NatsServer, tmp_path: Path, saved_endpoints: list[EndpointSaved]
) -> Iterator[Callable[..., CallerProcess]]:
    """Start callers on the test's NATS, where the fake's endpoints are saved: `callers(env={...})`; every
    one is stopped afterwards."""
    started: list[CallerProcess] = []

    def start(env: dict[str, str] | None = None) -> CallerProcess:
        proc = CallerProcess(nats_server, tmp_path / "home", len(started), env or {})
        started.append(proc)
        return proc.start()

    try:
        yield start
    finally:
        for proc in started:
            proc.stop()

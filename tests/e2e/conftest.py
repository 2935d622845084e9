"""A whole Benchwarmers stack (NATS + five services as processes) and a fake provider, for black-box tests
through the official SDKs. One stack for the session; tests use models and collections of their own."""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from nats.js.errors import NoKeysError

from cli.stack import Stack
from shared import bus, subjects
from shared.bus_access import ADMIN, BUCKETS
from shared.natsserver import free_port
from tests.fakes.feeds import FeedServer
from tests.fakes.provider import FakeProvider

KEEPALIVE_S = 0.5


class Admin:
    """The admin JSON API over httpx; every write must answer `{"ok": true}`."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.http.post(path, json=body)
        data: dict[str, Any] = reply.json()
        assert reply.status_code == 200 and data["ok"], (path, body, reply.status_code, data)
        return data

    def endpoint(self, name: str, base: str) -> None:
        self.post("/api/endpoint", {"name": name, "base": base})

    def model(self, served: str, endpoint: str = "fake", **extra: Any) -> str:
        alias: str = self.post("/api/models", {"served": served, "endpoint": endpoint, **extra})["model"][
            "alias"
        ]
        return alias

    def collection(self, name: str, members: list[str], **extra: Any) -> None:
        self.post("/api/collection", {"name": name, "members": members, **extra})


def stack_logs(home: Path) -> str:
    tails = []
    for log in sorted((home / "logs").glob("*.log")):
        tails.append(f"--- {log.name}\n{log.read_text(errors='replace')[-2500:]}")
    return "\n".join(tails)


@contextmanager
def logs_on_failure(home: Path) -> Iterator[None]:
    """Print the stack's log tails when what runs inside fails, then let the failure through."""
    try:
        yield
    except BaseException:
        print(stack_logs(home))
        raise


@contextmanager
def running(stack: Stack) -> Iterator[Stack]:
    """The stack started (its logs printed if anything fails while it runs), then stopped by PID."""
    try:
        with logs_on_failure(stack.home):
            stack.start()
            yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="session")
def provider() -> Iterator[FakeProvider]:
    fake = FakeProvider().start()
    try:
        yield fake
    finally:
        fake.stop()


CATALOG_PATHS = {"openrouter": "/api/v1/models", "models_dev": "/api.json", "freellmapi": "/v1/latest"}


@pytest.fixture(scope="session")
def catalog_feeds() -> Iterator[FeedServer]:
    """The catalog's public feeds, served locally (every path 404 until a test says what it serves)."""
    server = FeedServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory, provider: FakeProvider,
          catalog_feeds: FeedServer) -> Iterator[Stack]:
    """One stack for every e2e module (start-ups are the slow part); each test uses its own collections.
    Keep-alives every 0.5 s, so a stream's silence is seen within a test's patience. The prober reads the
    catalog's feeds from `catalog_feeds`, never from the internet."""
    home = tmp_path_factory.mktemp("stack")
    feeds = {f"BENCH_CATALOG_{name.upper()}_URL": catalog_feeds.url(path)
             for name, path in CATALOG_PATHS.items()}
    stack = Stack(
        home=home,
        port=free_port(),
        extra_env={"BENCHWARMERS_KEY_FAKE": "sk-test-not-a-real-key", "BENCH_KEEPALIVE_S": str(KEEPALIVE_S),
                   "BENCH_CATALOG_TIMEOUT_S": "5", **feeds},
    )
    with running(stack):
        Admin(stack.url).endpoint("fake", provider.base_url)
        yield stack


async def admin_bus(stack: Stack) -> bus.NATS:
    """A connection to the stack's bus with the operator's (`admin`) credentials, for a test's look."""
    assert stack.nats_url
    return await bus.connect(stack.nats_url, "test-admin", stack.login(ADMIN))


async def everything_on_the_bus(stack: Stack) -> str:
    """Every event in the stream and every entry of every bucket, as text (where a secret must not be)."""
    nc = await admin_bus(stack)
    try:
        js = nc.jetstream()
        texts = []
        last = (await js.stream_info(subjects.EVENTS_STREAM)).state.last_seq
        for seq in range(1, last + 1):
            stored = await js.get_msg(subjects.EVENTS_STREAM, seq)
            texts.append((stored.data or b"").decode(errors="replace"))
        for name in BUCKETS:
            kv = await js.key_value(name)
            try:
                keys = await kv.keys()
            except NoKeysError:
                keys = []
            for key in keys:
                entry = await kv.get(key)
                value = entry.value or b""
                if name == subjects.CATALOG_BUCKET:
                    value = zlib.decompress(value)  # the catalog's feed caches are stored compressed
                texts.append(key + value.decode(errors="replace"))
        return "\n".join(texts)
    finally:
        await nc.close()


def ledger_caught_up(stack: Stack) -> bool:
    async def check() -> bool:
        nc = await admin_bus(stack)
        try:
            last = (await nc.jetstream().stream_info(subjects.EVENTS_STREAM)).state.last_seq
            reply = await nc.request(subjects.RPC_LEDGER_STATUS, b"{}", timeout=10)
            return int(json.loads(reply.data)["seq"]) >= last
        finally:
            await nc.close()

    return asyncio.run(check())


def ledger_dump(stack: Stack) -> tuple[list[str], str]:
    """Every table of the ledger's own DuckDB file, as text: the ledger is stopped (it holds the file's
    lock) once it has folded everything, then started again for the tests that follow."""
    wait_until(lambda: ledger_caught_up(stack), what="the ledger folding every event")
    ledger = stack.find("ledger")
    ledger.stop()
    try:
        con = duckdb.connect(str(stack.home / "ledger.duckdb"), read_only=True)
        try:
            tables = [
                row[0]
                for row in con.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
                ).fetchall()
            ]
            dumped = "\n".join(str(con.execute(f'SELECT * FROM "{table}"').fetchall()) for table in tables)
        finally:
            con.close()
    finally:
        ledger.start()
        stack.wait_ready()
    return tables, dumped


def events_on(stack: Stack, subject: str) -> tuple[int, int]:
    """How many events the stream holds on `subject`, and the sequence of the last (a read of the source
    of truth)."""

    async def read() -> tuple[int, int]:
        nc = await admin_bus(stack)
        try:
            js = nc.jetstream()
            info = await js.stream_info(subjects.EVENTS_STREAM, subjects_filter=subject)
            count = (info.state.subjects or {}).get(subject, 0)
            if not count:
                return 0, 0
            last = await js.get_last_msg(subjects.EVENTS_STREAM, subject)
            return count, last.seq or 0
        finally:
            await nc.close()

    return asyncio.run(read())


def wait_until(check: Callable[[], bool], timeout: float = 20.0, what: str = "the condition") -> None:
    """Poll `check` until it holds; fail after `timeout` seconds."""
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"{what} did not happen within {timeout}s")
        time.sleep(0.1)

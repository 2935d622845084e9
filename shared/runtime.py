"""The life of a service process: connect, provision, serve, answer health pings, stop on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import structlog
from nats.aio.client import Client as NATS

from shared import bus, bus_access, metrics, subjects
from shared.bus_credentials import BusLogin, CredentialsError
from shared.ops import OpsServer, Readiness
from shared.settings import BusSettings

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a process's main coroutine on uvloop where it exists (as uvicorn does for the gateway): every
    hop of a panel crosses an event loop, and uvloop's is several times cheaper than asyncio's own.
    Credentials the bus refuses end the process with one line, not a traceback."""
    try:
        import uvloop
    except ImportError:
        runner: Callable[[Coroutine[Any, Any, T]], T] = asyncio.run
    else:
        runner = uvloop.run
    try:
        return runner(main)
    except CredentialsError as exc:
        raise SystemExit(str(exc)) from None


def login_or_exit(service: str, settings: BusSettings) -> BusLogin:
    """Read this process's NATS credentials before anything starts, and check that the server takes them;
    on failure exit with one line that names what is missing and where it is read from."""
    try:
        login = settings.bus_login(service)
    except CredentialsError as exc:
        raise SystemExit(str(exc)) from None

    async def check() -> None:
        nc = await bus.connect(settings.nats_url, f"{service}-login-check", login)
        await nc.close()

    try:
        asyncio.run(check())
    except CredentialsError as exc:
        raise SystemExit(str(exc)) from None
    return login


Start = Callable[[NATS], Awaitable[Callable[[], Awaitable[None]] | None]]


async def serve(
    service: str, instance: str, settings: BusSettings, login: BusLogin, start: Start,
    readiness: Readiness | None = None,
) -> None:
    """Run one service until a stop signal: `start` sets it up and returns its own stop coroutine, and may
    add its own checks to `readiness` (the ops port's `/readyz`)."""
    log = structlog.get_logger(service)
    readiness = readiness or Readiness()
    started = asyncio.Event()
    readiness.add("started", lambda: None if started.is_set() else "still starting")
    ops = await start_ops(settings, readiness)
    nc = await bus.connect(settings.nats_url, instance, login)
    watch_bus(nc, readiness)
    mismatches = await bus.provision(nc.jetstream(), settings.replicas,
                                     owner=service == bus_access.STREAM_OWNER)
    report_mismatches(mismatches, readiness)
    stop_service = await start(nc)

    async def on_ping(msg: Any) -> None:
        await msg.respond(b'{"ok": true, "instance": "%s"}' % instance.encode())

    await nc.subscribe(subjects.health_subject(service), cb=on_ping)
    started.set()
    log.info("service_ready", instance=instance, nats=settings.nats_url)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("service_stopping", instance=instance, drain_s=settings.drain_s)
    started.clear()  # not ready while draining: the orchestrator sends nothing new
    if stop_service is not None:
        with contextlib.suppress(Exception):
            await stop_service()
    with contextlib.suppress(Exception):
        await nc.drain()
    if ops is not None:
        await ops.stop()


async def start_ops(settings: BusSettings, readiness: Readiness) -> OpsServer | None:
    """The ops port when one is set; a port already taken stops the process with one line."""
    if not settings.ops_port:
        return None
    try:
        return await OpsServer(readiness).start(settings.ops_bind, settings.ops_port)
    except OSError as exc:
        where = f"BENCH_OPS_PORT={settings.ops_port} on BENCH_OPS_BIND={settings.ops_bind}"
        raise SystemExit(f"{where}: {exc.strerror}") from None


def watch_bus(nc: NATS, readiness: Readiness) -> None:
    """Ready only while connected; the gauge follows."""
    metrics.BUS_CONNECTED.set_function(lambda: 1.0 if nc.is_connected else 0.0)
    readiness.add("bus", lambda: None if nc.is_connected else "not connected to NATS")


def report_mismatches(mismatches: list[str], readiness: Readiness) -> None:
    for problem in mismatches:
        structlog.get_logger("bus").error("provisioning_mismatch", problem=problem)
    readiness.add("streams", lambda: "; ".join(mismatches) or None)

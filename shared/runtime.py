"""The life of a service process: connect, provision, serve, answer health pings, stop on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import structlog
from nats.aio.client import Client as NATS

from shared import bus, bus_access, subjects
from shared.bus_credentials import BusLogin, CredentialsError
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


async def serve(service: str, instance: str, settings: BusSettings, login: BusLogin, start: Start) -> None:
    """Run one service until a stop signal: `start` sets it up and returns its own stop coroutine."""
    log = structlog.get_logger(service)
    nc = await bus.connect(settings.nats_url, instance, login)
    await bus.provision(nc.jetstream(), settings.replicas, owner=service == bus_access.STREAM_OWNER)
    stop_service = await start(nc)

    async def on_ping(msg: Any) -> None:
        await msg.respond(b'{"ok": true, "instance": "%s"}' % instance.encode())

    await nc.subscribe(subjects.health_subject(service), cb=on_ping)
    log.info("service_ready", instance=instance, nats=settings.nats_url)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("service_stopping", instance=instance)
    if stop_service is not None:
        with contextlib.suppress(Exception):
            await stop_service()
    with contextlib.suppress(Exception):
        await nc.drain()

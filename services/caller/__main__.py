# ruff: noqa: E402
"""`python -m services.caller`: one caller replica (run as many as you like; they share the work queue)."""

from __future__ import annotations

from shared.lean import leave_out

leave_out("rich", "aiohttp")  # before anything imports them (shared/lean.py)
# isort: split

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial

import structlog
from nats.aio.client import Client as NATS

from services.caller.config_wait import ConfigWait
from services.caller.consumer import CallConsumer
from services.caller.keys import KeyStore
from services.caller.ledger_history import LedgerHistory
from services.caller.limit_book import LimitBook
from services.caller.models_rpc import ModelLister
from services.caller.pacer import Pacer
from services.caller.paid_guard import PaidGuard
from services.caller.route_call import RouteCaller
from services.caller.route_relay import RouteRelay
from services.caller.upstream import Upstream, make_client, make_transport
from services.caller.window_store import WindowStore
from shared import subjects
from shared.bus import Projection, caught_up
from shared.config_state import ConfigState
from shared.logging import setup_logging
from shared.ops import Readiness
from shared.runtime import login_or_exit, run, serve
from shared.settings import CallerSettings, instance_name, settings_or_exit


async def start_caller(
    nc: NATS, settings: CallerSettings, instance: str, readiness: Readiness
) -> Callable[[], Awaitable[None]]:
    """Folds the config (user limits) and the learned limits before taking any call."""
    js = nc.jetstream()
    book = LimitBook(ConfigState())
    projections = [Projection(js, subjects.CONFIG, book.config.apply, "caller-config"),
                   Projection(js, subjects.LIMITS_ALL, book.fold, "caller-limits")]
    for projection in projections:
        await projection.start()
        readiness.add(projection.name, partial(caught_up, projection))
    transport = make_transport(settings.max_connections)
    client = make_client(transport)
    keys = KeyStore.from_environment(settings.secrets_path)
    guard = PaidGuard(book.config, settings.allow_paid)
    store = await WindowStore.open(nc)
    upstream = Upstream(transport, keys, Pacer(store, book, LedgerHistory(nc)), guard=guard)
    config = ConfigWait(projections[0])  # calls wait for the config position they were built on
    consumer = CallConsumer(nc, upstream, book, settings, instance, config)
    await consumer.start()
    lister = await ModelLister(client, keys, book.config).serve(nc)  # saved bases from the fold
    relay = await RouteRelay(nc, RouteCaller(upstream), book, instance, config).start()
    structlog.get_logger("caller").info("caller_started", concurrency=settings.concurrency,
                                        ack_wait_s=settings.ack_wait_s, heartbeat_s=settings.heartbeat_s,
                                        allow_paid=settings.allow_paid)

    async def stop() -> None:
        await lister.unsubscribe()
        # Both stop taking work at once, then drain together within BENCH_DRAIN_S.
        await asyncio.gather(relay.stop(settings.drain_s), consumer.stop())
        for projection in projections:
            await projection.stop()
        await store.close()
        await client.aclose()

    return stop


def main() -> None:
    settings = settings_or_exit(CallerSettings, "caller")
    setup_logging("caller", settings.log_level)
    instance = instance_name("caller")
    login = login_or_exit("caller", settings)
    readiness = Readiness()
    run(serve("caller", instance, settings, login, lambda nc: start_caller(nc, settings, instance, readiness),
              readiness))


if __name__ == "__main__":
    main()

"""`python -m services.caller`: one caller replica (run as many as you like; they share the work queue)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog
from nats.aio.client import Client as NATS

from services.caller.consumer import CallConsumer
from services.caller.keys import KeyStore
from services.caller.upstream import Upstream, make_client
from shared.logging import setup_logging
from shared.runtime import serve
from shared.settings import CallerSettings, instance_name


async def start_caller(nc: NATS, settings: CallerSettings, instance: str) -> Callable[[], Awaitable[None]]:
    client = make_client(settings.max_connections)
    upstream = Upstream(client, KeyStore.from_environment(settings.secrets_path))
    consumer = CallConsumer(nc.jetstream(), upstream, settings, instance)
    await consumer.start()
    structlog.get_logger("caller").info("caller_started", concurrency=settings.concurrency,
                                        ack_wait_s=settings.ack_wait_s, heartbeat_s=settings.heartbeat_s)

    async def stop() -> None:
        await consumer.stop()
        await client.aclose()

    return stop


def main() -> None:
    settings = CallerSettings()
    setup_logging("caller", settings.log_level)
    instance = instance_name("caller")
    asyncio.run(serve("caller", instance, settings, lambda nc: start_caller(nc, settings, instance)))


if __name__ == "__main__":
    main()

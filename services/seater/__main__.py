"""`python -m services.seater`: one seater process on the bus."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from services.seater.route_rpc import RouteRanker
from services.seater.service import Seater
from shared.logging import setup_logging
from shared.runtime import login_or_exit, run, serve
from shared.settings import SeaterSettings, instance_name


def main() -> None:
    settings = SeaterSettings()
    setup_logging("seater", settings.log_level)
    instance = instance_name("seater")

    async def start(nc: NATS) -> Callable[[], Awaitable[None]]:
        seater = Seater(nc, instance)
        await seater.start()
        ranker = await RouteRanker(seater.rotation, seater.config).serve(nc)

        async def stop() -> None:
            for sub in ranker:
                await sub.unsubscribe()
            await seater.stop()

        return stop

    run(serve("seater", instance, settings, login_or_exit("seater", settings), start))


if __name__ == "__main__":
    main()

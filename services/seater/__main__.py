# ruff: noqa: E402
"""`python -m services.seater`: one seater process on the bus."""

from __future__ import annotations

from shared.lean import leave_out

leave_out("rich", "aiohttp")  # before anything imports them (shared/lean.py)
# isort: split

from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from services.seater.ranking import ROUTE_RANKINGS
from services.seater.route_rpc import RouteSeater
from services.seater.service import Seater
from shared.bus import caught_up
from shared.logging import setup_logging
from shared.ops import Readiness
from shared.runtime import login_or_exit, run, serve
from shared.settings import SeaterSettings, instance_name, settings_or_exit


def main() -> None:
    settings = settings_or_exit(SeaterSettings, "seater")
    setup_logging("seater", settings.log_level)
    instance = instance_name("seater")
    readiness = Readiness()

    async def start(nc: NATS) -> Callable[[], Awaitable[None]]:
        seater = Seater(nc, instance)
        await seater.start()
        readiness.add("fold", lambda: caught_up(seater.projection))
        ranking = ROUTE_RANKINGS[settings.route_ranking]
        ranker = await RouteSeater(seater.config, seater.rotation, ranking, seater.ready).serve(nc)

        async def stop() -> None:
            for sub in ranker:
                await sub.unsubscribe()
            await seater.stop()

        return stop

    run(serve("seater", instance, settings, login_or_exit("seater", settings), start, readiness))


if __name__ == "__main__":
    main()

"""`python -m services.prober`: the prober process; for now the scheduler, its mode from `BENCH_SCHEDULER`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from services.prober.schedule import parse_mode
from services.prober.scheduler import Scheduler
from shared.logging import setup_logging
from shared.runtime import login_or_exit, run, serve
from shared.settings import ProberSettings, instance_name, settings_or_exit


def main() -> None:
    settings = settings_or_exit(ProberSettings, "prober")
    log = setup_logging("prober", settings.log_level)
    try:
        mode = parse_mode(settings.scheduler)
    except ValueError as exc:
        raise SystemExit(f"prober: {exc}") from None
    scheduler = Scheduler(mode)

    async def start(nc: NATS) -> Callable[[], Awaitable[None]]:
        task = asyncio.create_task(scheduler.run(), name="scheduler")

        def report(done: asyncio.Task[None]) -> None:
            if not done.cancelled() and done.exception() is not None:
                log.error("scheduler_crashed", exc_info=done.exception())

        task.add_done_callback(report)

        async def stop() -> None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

        return stop

    login = login_or_exit("prober", settings)
    log.info("prober_starting", scheduler=mode.value)
    run(serve("prober", instance_name("prober"), settings, login, start))


if __name__ == "__main__":
    main()

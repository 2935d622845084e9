"""`python -m services.prober`: the prober process; for now the scheduler, its mode from `BENCH_SCHEDULER`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from services.prober.schedule import Mode
from services.prober.scheduler import Scheduler
from shared.logging import setup_logging
from shared.runtime import serve
from shared.settings import ProberSettings, instance_name


def parse_mode(value: str) -> Mode:
    try:
        return Mode(value.strip().lower())
    except ValueError:
        choices = ", ".join(m.value for m in Mode)
        raise SystemExit(f"prober: BENCH_SCHEDULER={value!r} is not one of {choices}") from None


def main() -> None:
    settings = ProberSettings()
    log = setup_logging("prober", settings.log_level)
    mode = parse_mode(settings.scheduler)
    scheduler = Scheduler(mode)

    async def start(nc: NATS) -> Callable[[], Awaitable[None]]:
        task = asyncio.create_task(scheduler.run(), name="scheduler")

        async def stop() -> None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

        return stop

    log.info("prober_starting", scheduler=mode.value)
    asyncio.run(serve("prober", instance_name("prober"), settings, start))


if __name__ == "__main__":
    main()

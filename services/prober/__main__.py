"""`python -m services.prober`: the prober process: the scheduler (its mode from `BENCH_SCHEDULER`) and
suite passes on request (`bench.rpc.prober.suite`), from the config and suite scores it folds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from services.prober.schedule import parse_mode
from services.prober.scheduler import Scheduler
from services.prober.suite_choice import SuiteHistory
from services.prober.suite_job import SuiteJob
from services.prober.suite_pass import SuitePass
from services.prober.suite_rpc import SuiteRpc
from shared import subjects
from shared.bus import Projection
from shared.config_state import ConfigState
from shared.logging import setup_logging
from shared.runtime import login_or_exit, run, serve
from shared.settings import ProberSettings, instance_name


def main() -> None:
    settings = ProberSettings()
    log = setup_logging("prober", settings.log_level)
    try:
        mode = parse_mode(settings.scheduler)
    except ValueError as exc:
        raise SystemExit(f"prober: {exc}") from None
    scheduler = Scheduler(mode)

    async def start(nc: NATS) -> Callable[[], Awaitable[None]]:
        js = nc.jetstream()
        config, history = ConfigState(), SuiteHistory()
        projections = [Projection(js, subjects.CONFIG, config.apply, "prober-config"),
                       Projection(js, f"{subjects.SUITE_PREFIX}.>", history.apply, "prober-suite")]
        for projection in projections:
            await projection.start()
        job = SuiteJob(SuitePass(nc, config, by=instance_name("prober")), config, history, settings.home)
        suite_subs = await SuiteRpc(job).serve(nc)
        task = asyncio.create_task(scheduler.run(), name="scheduler")

        def report(done: asyncio.Task[None]) -> None:
            if not done.cancelled() and done.exception() is not None:
                log.error("scheduler_crashed", exc_info=done.exception())

        task.add_done_callback(report)

        async def stop() -> None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            for sub in suite_subs:
                await sub.unsubscribe()
            for projection in projections:
                await projection.stop()

        return stop

    login = login_or_exit("prober", settings)
    log.info("prober_starting", scheduler=mode.value)
    run(serve("prober", instance_name("prober"), settings, login, start))


if __name__ == "__main__":
    main()

# ruff: noqa: E402
"""`python -m services.ledger`: run the ledger. `python -m services.ledger rebuild`: rebuild it offline.

The offline rebuild is for when no ledger runs (DuckDB lets one process hold the file; a running ledger
is rebuilt with `bench ledger rebuild` instead, and this command refuses while it holds the file).
"""

from __future__ import annotations

from shared.lean import leave_out

leave_out("rich", "aiohttp")  # before anything imports them (shared/lean.py)
# isort: split

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from services.ledger import rpc
from services.ledger.ledger import REBUILD_WAIT_S, Ledger
from services.ledger.store import LedgerFileBusy, discard
from services.ledger.watch import StreamWatch
from shared import bus
from shared.bus_credentials import BusLogin
from shared.logging import setup_logging
from shared.ops import Readiness
from shared.runtime import login_or_exit, serve
from shared.runtime import run as run_service
from shared.settings import LedgerSettings, instance_name, settings_or_exit


async def run(settings: LedgerSettings, login: BusLogin) -> None:
    readiness = Readiness()

    async def start(nc: NATS) -> Callable[[], Awaitable[None]]:
        ledger = open_ledger(nc.jetstream(), settings, settings.linger_s)
        await ledger.start()
        subs = await rpc.serve(nc, ledger)
        watch = StreamWatch(nc.jetstream(), lambda: ledger.position, settings.ready_lag).start()
        readiness.add("fold", watch.problem)

        async def stop() -> None:
            await watch.stop()
            for sub in subs:
                await sub.unsubscribe()
            await ledger.stop()

        return stop

    await serve("ledger", instance_name("ledger"), settings, login, start, readiness)


def open_ledger(js: JetStreamContext, settings: LedgerSettings, linger_s: float) -> Ledger:
    """The ledger on the settings' file and DuckDB knobs (the service lingers for big batches; a rebuild
    does not)."""
    return Ledger(js, settings.database(), settings.batch_max, linger_s, settings.duckdb_threads,
                  settings.duckdb_memory_limit, settings.duckdb_checkpoint_threshold)


async def rebuild_offline(settings: LedgerSettings, login: BusLogin) -> dict[str, object]:
    """Replay the whole stream into a new file, then close it."""
    path = settings.database()
    nc = await bus.connect(settings.nats_url, instance_name("ledger-rebuild"), login)
    try:
        js = nc.jetstream()
        await bus.provision(js, settings.replicas)
        discard(path)  # refuses (LedgerFileBusy) while a ledger holds the file
        ledger = open_ledger(js, settings, linger_s=0.0)
        await ledger.start()
        try:
            started = asyncio.get_running_loop().time()
            await ledger.caught_up(await ledger.stream_last_seq(), REBUILD_WAIT_S)
            counts = await ledger.status()
            seconds = round(asyncio.get_running_loop().time() - started, 3)
            return {"ok": True, "events": counts["rows"]["events_applied"], "seconds": seconds}
        finally:
            await ledger.stop()
    finally:
        await nc.close()


def main(argv: list[str]) -> int:
    settings = settings_or_exit(LedgerSettings, "ledger")
    setup_logging("ledger", settings.log_level)
    if argv not in ([], ["rebuild"]):
        print("usage: python -m services.ledger [rebuild]", file=sys.stderr)
        return 2
    login = login_or_exit("ledger", settings)
    if argv == ["rebuild"]:
        try:
            print(json.dumps(asyncio.run(rebuild_offline(settings, login))))
        except LedgerFileBusy as exc:
            print(f"a ledger is running ({exc}); rebuild it with `bench ledger rebuild`", file=sys.stderr)
            return 2
        return 0
    run_service(run(settings, login))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

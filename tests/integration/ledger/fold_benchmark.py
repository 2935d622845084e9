"""How fast the ledger folds seat events: not a test, a measurement to run by hand.

    python -m tests.integration.ledger.fold_benchmark [events]

Three figures for N `seat_completed` events (default 100,000): decoding and mapping them to rows (pure),
writing those rows to a fresh DuckDB file in batches of `batch_max`, and the whole path through a real
NATS server (a ledger catching up on a stream that already holds them).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from services.ledger.fold import fold_batch
from services.ledger.ledger import REBUILD_WAIT_S, Ledger
from services.ledger.store import Store
from shared import bus
from shared.events import decode_event, encode_event
from shared.logging import setup_logging
from shared.natsserver import NatsServer
from shared.settings import LedgerSettings
from tests.unit.ledger.factories import completed


def seat_events(count: int) -> list[bytes]:
    prompt = "review the retry loop in the uploader and say where it can spin forever " * 2
    return [
        encode_event(completed(f"p20261202-093000-{n // 5:04x}.member{n % 5}", alias=f"m{n % 17}",
                               prompt=prompt, answer="a plausible answer of some length " * 20))
        for n in range(count)
    ]


def rate(count: int, seconds: float) -> str:
    return f"{seconds:7.2f} s  ({count / seconds:>9,.0f} events/s)"


async def through_nats(raw: list[bytes], workdir: Path, batch_max: int) -> float:
    server = NatsServer(store=workdir / "nats").start()
    try:
        nc = await bus.connect(server.url, "fold-benchmark", server.login("admin"))
        js = nc.jetstream()
        await bus.provision(js)
        for data in raw:
            event = decode_event(data)
            await js.publish_async(event.subject(), data, headers={"Nats-Msg-Id": event.id})
        await js.publish_async_completed()
        ledger = Ledger(js, workdir / "nats-ledger.duckdb", batch_max)
        started = time.perf_counter()
        await ledger.start()
        await ledger.caught_up(await ledger.stream_last_seq(), REBUILD_WAIT_S)
        seconds = time.perf_counter() - started
        await ledger.stop()
        await nc.close()
        return seconds
    finally:
        server.stop()


def main(count: int) -> None:
    setup_logging("fold-benchmark", "WARNING")
    batch_max = LedgerSettings().batch_max
    raw = seat_events(count)
    size = sum(map(len, raw)) / count
    print(f"{count:,} seat_completed events, {size:,.0f} bytes each, batches of {batch_max}")

    started = time.perf_counter()
    batches = [
        fold_batch((n + i + 1, decode_event(data)) for i, data in enumerate(raw[n:n + batch_max]))
        for n in range(0, count, batch_max)
    ]
    print("decode + map to rows (pure):   ", rate(count, time.perf_counter() - started))

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "ledger.duckdb")
        started = time.perf_counter()
        for n, rows in enumerate(batches):
            store.apply(rows, min((n + 1) * batch_max, count))
        print("write rows to DuckDB:          ", rate(count, time.perf_counter() - started))
        store.close()
        seconds = asyncio.run(through_nats(raw, Path(tmp), batch_max))
        print("stream → ledger (NATS, DuckDB):", rate(count, seconds))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)

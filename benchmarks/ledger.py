"""The ledger at the scale of a busy shared gateway (issue 23): `make bench-ledger`.

    python -m benchmarks.ledger [--seats 1000000,10000000] [--nats 300000]

For each size, that many seats at 100,000 a day (panels of three seats, one in twenty failing, a verdict
on one seat in ten) are folded into a fresh ledger file THROUGH THE FOLD: events in batches of the
ledger's `batch_max`, by the ledger's own fold loop (`services.ledger.folding`: each batch decoded from
its JSON, mapped by `fold_batch` and written by `Store.apply`), as the ledger does
with what it pulls from the stream (the events are made and encoded ahead, ten batches at a time, outside
the timing). Then DuckDB's own memory against the ledger's cap and, on the full file: `bench report` over
the last 30 days (a month at that rate), a typical `bench sql` query, an export of one day's rows, file
sizes. `--nats N` also times a rebuild through a real NATS server (a ledger catching up on a stream
holding N seats' events: `bench ledger rebuild` without the HTTP hop).

Timed figures are medians of repeats, and the fold is also given in events per CPU second (what it costs
whatever else the machine runs); the machine-speed line (benchmarks.panel's fixed Python workload) says
whether a slower report is the machine or the code.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from benchmarks.panel import python_speed
from services.ledger import folding
from services.ledger.ledger import REBUILD_WAIT_S, Ledger
from services.ledger.store import MEMORY_LIMIT, Store, exports_of
from shared import bus
from shared.commands import ExportRequest, ReportRequest
from shared.events import (
    EventBase,
    PanelAnswered,
    PanelSeated,
    SeatCompleted,
    SeatPlan,
    VerdictRecorded,
    encode_event,
)
from shared.ids import candidate_id
from shared.logging import setup_logging
from shared.natsserver import NatsServer
from shared.settings import LedgerSettings

SEATS_PER_PANEL = 3
MODELS = [f"model-{n:02d}" for n in range(24)]
COLLECTIONS = [f"bench/team-{n}" for n in range(8)]
ERRORS = ("429 Too Many Requests: rate limit reached", "no answer in 120 s", "503 overloaded, try later",
          "context length exceeded")
ANSWER = "The retry loop in upload() never backs off when the server answers 503; cap it and add jitter. " * 3
PROMPT = "review the retry loop in the uploader and say where it can spin forever"
END = datetime(2026, 12, 1, tzinfo=UTC)
SEATS_PER_DAY = 100_000  # a busy shared gateway: 1M seats are ten days, 10M a hundred
MONTH = timedelta(days=30)
SQL = ("SELECT alias, count(*) AS seats, avg(seconds) AS mean_s FROM seats "
       "WHERE \"at\" >= TIMESTAMPTZ '2026-11-24' GROUP BY alias ORDER BY seats DESC")
REPEATS = 5
CHUNK = 10  # batches made ahead at a time, outside the timing


def panel_events(n: int, total_panels: int) -> list[EventBase]:
    """Panel n of `total_panels`, spread evenly over the days they make up to END: plan, three seats, the
    answer, a verdict on one seat in ten. Built with `model_construct` (the fields are right by
    construction): the fold and the store are what is measured, not pydantic making test data."""
    span = timedelta(days=total_panels * SEATS_PER_PANEL / SEATS_PER_DAY)
    at = END - span + span * (n / total_panels)
    panel = f"p{at:%Y%m%d-%H%M%S}-{n:08x}"
    collection = COLLECTIONS[n % len(COLLECTIONS)]
    aliases = [MODELS[(n + k * 7) % len(MODELS)] for k in range(SEATS_PER_PANEL)]
    calls = [f"{panel}.member{k + 1}" for k in range(SEATS_PER_PANEL)]
    plans = [SeatPlan.model_construct(call=c, seat="member", alias=a, served=f"{a}-served", endpoint="ep",
                                      connection="ep") for c, a in zip(calls, aliases, strict=True)]
    events: list[EventBase] = [PanelSeated.model_construct(
        id=f"seated:{panel}", v=1, at=at, by="gateway", type="panel_seated", panel=panel,
        collection=collection, shape="code", shape_by="words", key="team", seats=plans, skipped=[])]
    for k, (call, alias) in enumerate(zip(calls, aliases, strict=True)):
        failed = (n * SEATS_PER_PANEL + k) % 20 == 0
        events.append(SeatCompleted.model_construct(
            id=f"seat:{call}", v=1, at=at + timedelta(seconds=2 + k), by="caller", type="seat_completed",
            call=call, panel=panel, seat="member", alias=alias, served=f"{alias}-served", endpoint="ep",
            connection="ep", collection=collection, task=f"{PROMPT} ({collection}, code)", purpose="panel",
            status="error" if failed else "ok", seconds=0.4 + (n * 7 + k * 13) % 97 / 10,
            error=ERRORS[n % len(ERRORS)] if failed else "", http_status=500 if failed else 200, attempts=1,
            tokens_in=900 + n % 300, tokens_out=0 if failed else 250 + n % 500, reasoning_tokens=0,
            cached_tokens=0, tokens_estimated=False, caller="caller-1", served_by=f"{alias}-served",
            swap=False, paced="sent", waited_s=0.0, answer="" if failed else ANSWER, tool_calls=0,
            first_token_s=None,
        ))
    events.append(PanelAnswered.model_construct(
        id=f"answered:{panel}", v=1, at=at + timedelta(seconds=6), by="gateway", type="panel_answered",
        panel=panel, collection=collection, shape="code", shape_by="words", key="team", reply="all",
        system="", prompt=PROMPT, calls=calls, note=""))
    if n % 10 < SEATS_PER_PANEL:  # one seat in ten is judged
        k = n % 10
        events.append(VerdictRecorded.model_construct(
            id=f"verdict:{calls[k]}:{n}", v=1, at=at + timedelta(minutes=5), by="local",
            type="verdict_recorded", call=calls[k], alias=aliases[k], useful=n % 3 != 0, note="", real=[],
            false_claims=[]))
    return events


def batches(seats: int, batch_max: int) -> Iterator[list[EventBase]]:
    """The month's events in stream order, `batch_max` at a time."""
    total = seats // SEATS_PER_PANEL
    pending: list[EventBase] = []
    for n in range(total):
        pending.extend(panel_events(n, total))
        while len(pending) >= batch_max:
            yield pending[:batch_max]
            pending = pending[batch_max:]
    if pending:
        yield pending


@dataclass
class Folded:
    events: int = 0
    seconds: float = 0.0  # wall clock
    cpu_s: float = 0.0  # this process's CPU time: what the fold costs whatever else the machine runs
    rates: list[float] = field(default_factory=list)  # events/s of each batch


class Handed:
    """A `BatchSource` over batches made before the clock starts: the stream, with no NATS in between."""

    def __init__(self, batches: list[list[tuple[int, bytes]]]) -> None:
        self.left = batches

    async def next_batch(self, linger_s: float = 0.0, urgent: asyncio.Event | None = None) -> list[
            tuple[int, bytes]]:
        if not self.left:
            await asyncio.Event().wait()  # the stream is idle: the fold waits, and is stopped
        return self.left.pop(0)


async def fold_chunk(store: Store, chunk: list[list[tuple[int, bytes]]], after: int) -> None:
    """Run the ledger's own fold loop over `chunk` until its last batch is in the file."""
    last = chunk[-1][-1][0]
    reached = asyncio.Event()

    async def written(seq: int) -> None:
        if seq == last:
            reached.set()

    loop = asyncio.create_task(folding.fold(Handed(chunk), store, after, written))
    await reached.wait()
    loop.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await loop


def numbered(made: Iterable[list[EventBase]], after: int) -> list[list[tuple[int, bytes]]]:
    """Batches of (stream sequence, JSON), numbered on from `after`."""
    seq = itertools.count(after + 1)
    return [[(next(seq), encode_event(e)) for e in batch] for batch in made]


def fold_into(store: Store, seats: int, batch_max: int) -> Folded:
    """Fold the seats' events into `store` through the ledger's fold loop (`folding.fold`: decode, map
    and write each batch). The events are made and encoded ahead, CHUNK batches at a
    time, outside the timing; each chunk's timing ends when its last batch is in the file."""
    out = Folded()
    made = batches(seats, batch_max)
    while chunk := numbered(itertools.islice(made, CHUNK), out.events):
        events = chunk[-1][-1][0] - out.events
        gc.collect()
        started, cpu = time.perf_counter(), time.process_time()
        asyncio.run(fold_chunk(store, chunk, out.events))
        took = time.perf_counter() - started
        out.seconds += took
        out.cpu_s += time.process_time() - cpu
        out.events += events
        out.rates.append(events / took)
    return out


def median_s(fn: object, *args: object) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        fn(*args)  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def size_of(path: Path) -> int:
    if not path.is_dir():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def one_size(seats: int, workdir: Path, batch_max: int) -> None:
    path = workdir / f"ledger-{seats}.duckdb"
    store = Store(path)
    folded = fold_into(store, seats, batch_max)
    print(f"{seats:>11,} seats: {folded.events:,} events folded in {folded.seconds:,.1f} s: "
          f"{folded.events / folded.seconds:,.0f} events/s, median chunk of {CHUNK} batches "
          f"{statistics.median(folded.rates):,.0f} events/s; {folded.cpu_s:,.1f} s of CPU: "
          f"{folded.events / folded.cpu_s:,.0f} events per CPU second")
    print(f"{'':13} DuckDB's memory after the fold: {duckdb_memory(store)} (cap {MEMORY_LIMIT}; "
          "it keeps the blocks it touched up to the cap)")
    month = ReportRequest(since=END - MONTH, until=END)
    print(f"{'':13} bench report over the month: {median_s(store.report, month):.3f} s (median of {REPEATS})")
    print(f"{'':13} bench sql (seats per model, last 7 days): {median_s(store.sql, SQL, 1000):.3f} s")
    day = (END - timedelta(days=1)).date()
    exported = export_day(store, day)
    store.close()
    print(f"{'':13} export of {day}: {exported[0]:.2f} s, {mb(exported[1])} of Parquet; ledger file "
          f"{mb(size_of(path))}")
    shutil.rmtree(exports_of(path), ignore_errors=True)
    path.unlink()


def duckdb_memory(store: Store) -> str:
    """DuckDB's own account of its memory, by what holds it (table blocks, key indexes, ...)."""
    held = store.memory()
    parts = ", ".join(f"{tag} {mb(n)}" for tag, n in held.items())
    return f"{mb(sum(held.values()))} ({parts})" if held else "none"


def export_day(store: Store, day: date) -> tuple[float, int]:
    root = exports_of(store.path)
    times, size = [], 0
    for _ in range(3):
        name = candidate_id("x")
        started = time.perf_counter()
        store.export(ExportRequest(since=day), root, name, END)
        times.append(time.perf_counter() - started)
        size = size_of(root / name)
        shutil.rmtree(root / name)
    return statistics.median(times), size


async def rebuild_through_nats(seats: int, workdir: Path, batch_max: int) -> None:
    """A ledger catching up from sequence 1 on a stream that holds the month's events."""
    server = NatsServer(store=workdir / "nats").start()
    try:
        nc = await bus.connect(server.url, "ledger-benchmark", server.login("admin"))
        js = nc.jetstream()
        await bus.provision(js)
        count = 0
        for batch in batches(seats, batch_max):
            for event in batch:
                headers = {"Nats-Msg-Id": event.id}
                await js.publish_async(event.subject(), encode_event(event), headers=headers)
            await js.publish_async_completed()
            count += len(batch)
        ledger = Ledger(js, workdir / "rebuilt.duckdb", batch_max)
        started = time.perf_counter()
        await ledger.start()
        await ledger.caught_up(await ledger.stream_last_seq(), REBUILD_WAIT_S)
        seconds = time.perf_counter() - started
        await ledger.stop()
        await nc.close()
        print(f"rebuild through NATS: {count:,} events in {seconds:,.1f} s ({count / seconds:,.0f} events/s)")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", default="1000000,10000000", help="sizes to fold, comma-separated")
    parser.add_argument("--nats", type=int, default=300_000,
                        help="seats for the rebuild through NATS (0: none)")
    args = parser.parse_args()
    setup_logging("ledger-benchmark", "WARNING")
    batch_max = LedgerSettings().batch_max
    before = python_speed()
    print(f"ledger benchmark: batches of {batch_max}, {SEATS_PER_PANEL} seats a panel, "
          f"{SEATS_PER_DAY:,} seats a day")
    with tempfile.TemporaryDirectory() as tmp:
        for seats in (int(s) for s in args.seats.split(",")):
            one_size(seats, Path(tmp), batch_max)
        if args.nats:
            asyncio.run(rebuild_through_nats(args.nats, Path(tmp), batch_max))
    after = python_speed()
    print(f"machine speed: a fixed Python workload took {before:.1f} ms before the runs and {after:.1f} ms "
          "after (compare it between reports: a slower machine slows every figure)")


if __name__ == "__main__":
    main()

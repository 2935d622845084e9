"""The ledger is a fold of the stream: a rebuild (live or offline) gives the very same tables, and a ledger
killed in the middle of a fold applies every event exactly once when it comes back."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from shared import bus, subjects
from shared.events import (
    AlertCleared,
    AlertRaised,
    EventBase,
    GatewaySettingsSaved,
    SuiteAnswered,
    encode_event,
)
from shared.natsserver import NatsServer
from tests.integration.ledger.process import ROOT, LedgerProcess, ask, publish_all, status_when_caught_up
from tests.unit.ledger.factories import (
    T0,
    answered,
    call_used,
    completed,
    cooldown,
    endpoint,
    limit_learned,
    limits_saved,
    quota,
    quota_observed,
    recorded,
    route_offload,
    route_turn,
    seated,
)


def batches_applied(log: str) -> list[int]:
    """The last sequence of each batch the ledger logged as committed."""
    lines = (json.loads(line) for line in log.splitlines() if line.startswith("{"))
    return [int(line["last"]) for line in lines if line.get("event") == "batch_applied"]


def mixed_events(panels: int) -> list[EventBase]:
    """Panels as they really unfold (seated, seats, answered, some verdicts) with config changes between,
    a seat completed twice (caller and gateway deadline) and a duplicate verdict id; route conversations
    (attempts' usage, turns, offloads, verdicts), shadow seats, paced and refused calls, quota records that
    replace each other, learned limits, user limits, and alerts raised, raised again and cleared."""
    events: list[EventBase] = [endpoint("local", 0)]
    for n in range(panels):
        panel = f"p20261202-0930{n:02d}-{n:04x}"
        at = T0 + timedelta(minutes=n)
        calls = [f"{panel}.member1", f"{panel}.member2", f"{panel}.explorer"]
        events.append(seated(panel, ("a", "b", "c"), collection="core" if n % 2 else "vision", at=at))
        for i, call in enumerate(calls):
            failed = (n + i) % 7 == 0
            events.append(completed(call, alias="abc"[i], status="error" if failed else "ok",
                                    error="boom" if failed else "", collection="core" if n % 2 else "vision",
                                    at=at))
        if n % 5 == 0:
            late = f"seat:{calls[0]}:deadline"
            events.append(completed(calls[0], answer="no answer in 420s", event_id=late))
        events.append(answered(panel, calls, at=at))
        events.append(recorded(calls[0], "a", n % 3 != 0, f"note {n}", n=n, at=at))
        if n % 4 == 0:
            events.append(recorded(calls[0], "a", True, "changed my mind", n=1000 + n, at=at))
        if n % 10 == 0:
            events.append(GatewaySettingsSaved(id=f"cfg:gw:{n}", at=at, max_calls=5 + n % 3))
            events.append(cooldown("b", n))
        events.extend(side_events(n, at))
    return events


def side_events(n: int, at: datetime) -> list[EventBase]:
    """What happens between panels: one route conversation turn, and now and then the rest."""
    conv = f"r20261202-0930{n:02d}-{n:04x}"
    paced = ("sent", "waited", "refused")[n % 3]
    events: list[EventBase] = [
        call_used(f"{conv}.t1.1", alias="b", status="error", paced=paced,
                  attempts=0 if paced == "refused" else 1, waited_s=1.5 if paced == "waited" else 0.0, at=at),
        call_used(f"{conv}.t1.2", alias="a", at=at),
        route_offload(conv, 1, "a", at=at),
        route_turn(conv, 1, alias="a", at=at),
    ]
    if n % 3 == 0:
        events.append(recorded(f"{conv}.1", "a", n % 2 == 0, "route verdict", n=5000 + n, at=at))
    if n % 4 == 0:  # the same quota reported again and again: the latest stays
        resets = at + timedelta(hours=1)
        events.append(quota_observed(f"{conv}.t1.2", [quota("requests", "day", 1000, 900 - n, resets),
                                                        quota("tokens", "minute", 6000, 6000 - n)], at=at))
    if n % 5 == 0:
        events.append(completed(f"p20261202-0930{n:02d}-{n:04x}.shadow1", alias="c", purpose="shadow",
                                seat="shadow", at=at))
    if n % 6 == 0:
        events.append(limit_learned("b", "rpm", 60 - n, call=f"{conv}.t1.1", at=at))
    if n % 10 == 5:
        events.append(limits_saved("connection", "local", n=n, at=at, rpm=30 + n, rpmo=10_000))
    if n % 7 == 0:  # T-2: a suite task asked and scored (its seat, then its score)
        run = f"s20261202-0930{n:02d}-{n:04x}"
        events.append(completed(f"{run}.t1", alias="c", purpose="suite", seat="suite", at=at))
        events.append(SuiteAnswered(
            id=f"suite:{run}.t1", at=at, run=run, call=f"{run}.t1", task=f"t{n % 3}", alias="c",
            shape="review", recall=True, kind="answered", found=["race"], missed=["leak"] if n % 2 else [],
            seconds=1.5))
    if n % 8 in (1, 2, 3):  # C-16: raised, raised again, cleared
        key = f"model:paid:b-served-{n // 8}"
        events.append(AlertCleared(id=f"cfg:alert:{n}", at=at, key=key) if n % 8 == 3 else AlertRaised(
            id=f"cfg:alert:{n}", at=at, key=key, kind="went paid", message=f"priced {n}", alias="b"))
    return events


def rebuild_offline(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m services.ledger rebuild`, as an operator runs it."""
    return subprocess.run([sys.executable, "-m", "services.ledger", "rebuild"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


async def test_rebuild_gives_identical_tables(nc: bus.NATS, ledger: LedgerProcess) -> None:
    events = mixed_events(50)
    assert len(events) > 300
    last = await publish_all(nc, events)
    assert (await ask(nc, subjects.RPC_LEDGER_STATUS))["seq"] == last
    ledger.stop()
    incremental = ledger.snapshot()
    assert len(incremental["events_applied"]) == last
    # panel seats, route offloads, shadow and suite seats
    assert len(incremental["seats"]) == 150 + 50 + 10 + 8
    assert len(incremental["usage"]) == 150 + 100 + 10 + 8  # seats, route attempts, shadow and suite seats
    assert (len(incremental["route_turns"]), len(incremental["limits_learned"])) == (50, 9)
    assert len(incremental["quota_records"]) == 2
    assert len(incremental["alerts"]) == 19  # n % 8 in (1, 2, 3) for n < 50
    assert len(incremental["suite_answers"]) == 8  # n % 7 == 0 for n < 50

    await ledger.start(nc)
    reply = await ask(nc, subjects.RPC_LEDGER_REBUILD, wait_s=120)
    assert reply["ok"] is True and reply["events"] == last and reply["seconds"] >= 0
    # The rebuilt ledger answers as before, and keeps folding new events.
    assert (await ask(nc, subjects.RPC_LEDGER_STATUS))["seq"] == last
    ledger.stop()
    assert ledger.snapshot() == incremental

    offline = await asyncio.to_thread(rebuild_offline, ledger.env)
    assert offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout.strip().splitlines()[-1])["events"] == last
    assert ledger.snapshot() == incremental


async def test_offline_rebuild_refuses_while_a_ledger_runs(nc: bus.NATS, ledger: LedgerProcess) -> None:
    await publish_all(nc, [completed("p20261202-093000-abcd.member1")])
    assert (await ask(nc, subjects.RPC_LEDGER_STATUS))["rows"]["seats"] == 1
    offline = await asyncio.to_thread(rebuild_offline, ledger.env)
    assert offline.returncode == 2 and "bench ledger rebuild" in offline.stderr
    assert ledger.db.exists()
    assert (await ask(nc, subjects.RPC_LEDGER_STATUS))["rows"]["seats"] == 1


async def test_killed_mid_fold_every_event_is_applied_exactly_once(
    nats_server: NatsServer, nc: bus.NATS, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    count = 30_000
    js = nc.jetstream()
    for n in range(count):
        event = completed(f"p20261202-093000-{n // 5:04x}.member{n % 5}", at=T0)
        await js.publish_async(event.subject(), encode_event(event), headers={"Nats-Msg-Id": event.id})
    await asyncio.wait_for(js.publish_async_completed(), 60)
    info = await js.stream_info(subjects.EVENTS_STREAM)
    assert info.state.messages == count

    ledger = LedgerProcess(nats_server, home, BENCH_LOG_LEVEL="DEBUG", BENCH_BATCH_MAX="500")
    try:
        child = await ledger.start(nc)
        end = time.monotonic() + 60
        while max(batches_applied(ledger.log()), default=0) < count // 6:  # well into the fold
            assert time.monotonic() < end, ledger.log()[-2000:]
            await asyncio.sleep(0.005)
        child.signal(signal.SIGKILL)
        assert child.proc is not None and child.proc.wait(10) == -signal.SIGKILL
        killed_at = max(batches_applied(ledger.log()))
        assert killed_at < count, "the kill came after the fold had finished: nothing was interrupted"

        await ledger.start(nc)
        status = await status_when_caught_up(nc)
        assert status["seq"] == count
        assert status["rows"]["events_applied"] == count and status["rows"]["seats"] == count
    finally:
        ledger.stop()
    tables = ledger.snapshot()
    assert [row[0] for row in tables["events_applied"]] == list(range(1, count + 1))
    assert sorted(row[1] for row in tables["seats"]) == list(range(1, count + 1))

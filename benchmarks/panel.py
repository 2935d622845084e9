"""`make bench`: the panel path's overhead and throughput against the provider measured directly.

Starts the fake provider (200 ms per call) and the whole stack, saves a 3-member collection that seats 2
explorers (5 seats a panel), then measures with `loadgen` in a separate process:
  * direct-to-provider latency at concurrency 1 (the baseline) and throughput at 128 (the client's reach),
  * panel latency at concurrency 1 → overhead = panel − direct (p50, p95), and also against 5 direct calls
    sent at once (a panel's fan-out on the provider alone: a one-process fake provider answers 5 requests
    one after the other, which a single direct call does not show),
  * panels per second, p95 and errors at concurrency 32 and 128,
  * overhead again after 100,000 seats are already in the ledger and the seater's memory,
  * a streamed Anthropic panel at concurrency 32: first byte and first seat section vs the provider's own
    first token,
  * route mode, streamed, at concurrency 1 (60 turns) and 32 (a whole run, each worker one agent's
    conversation): time to first byte vs the provider's own,
  * each process's CPU per panel, and its memory: idle (started, configured, before any load), peak, and
    after the runs, or after a soak of `--soak-minutes` (env `BENCH_SOAK_MINUTES`; the issue's figure is
    10) of panels and route turns at 32 concurrent, with each process's growth over the soak once warm,
  * route mode's total time as well as its first byte, each against the provider's own,
  * an agent-sized route turn (`benchmarks/agent_turn.py`: 100 KB with 20 tools) at concurrency 1, against
    the provider given the same body: where a turn's per-byte work shows,
  * what a panel and a route turn cost the stack: CPU ms (all its processes) and NATS messages per request,
    figures a busy shared machine moves far less than it moves latency,
  * the floors: route mode's and a panel's hops with nothing of the product on them (`benchmarks/floor.py`,
    `benchmarks/panel_floor.py`, the latter with other designs beside it),
  * the product this project implements (benchwarmers 0.3.3, `benchmarks/anchor.py`), set up with its own
    commands against the same provider, after the floors (before any soak): route turns at 1 and 32 and
    panels at 1, 32 and 128, each against the provider's own figure taken just before it.
Before each latency run and the CPU count the stack is let settle (quiet), so no run shares the machine
with the catch-up of the one before it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import psutil

from benchmarks.agent_turn import AGENT_TOOLS, agent_body
from benchmarks.anchor import NAME, anchor_path, anchor_runs, route_through
from benchmarks.anchor import installed as anchor_installed
from benchmarks.anchor import warm as warm_anchor
from benchmarks.floor import floor_path
from benchmarks.memory import RssSampler, memory_report, snapshot
from benchmarks.panel_floor import panel_floor_runs
from cli.stack import Stack
from shared import bus
from shared.bus_access import ADMIN
from shared.events import EventBase, PanelSeated, SeatCompleted, SeatPlan
from shared.natsserver import free_port
from tests.fakes.provider import FakeProvider

MEMBERS = ["alpha-7b", "bravo-8b", "charlie-9b"]
EXPLORERS = ["delta-10b", "echo-11b", "foxtrot-12b", "golf-13b", "hotel-14b"]
SEATS = len(MEMBERS) + 2  # a panel: every member and 2 explorers (`configure`)
BODY = json.dumps({"model": "bench/core", "messages": [{"role": "user", "content": "Name one benchmark."}]})
ANTHROPIC_BODY = json.dumps(
    {
        "model": "bench/core",
        "max_tokens": 512,
        "stream": True,
        "messages": [{"role": "user", "content": "Name one benchmark."}],
    }
)
# A route conversation is keyed by its first user message (RM-4): each load worker is one agent with a
# conversation of its own, turn after turn (the first turn opens it; the rest continue it).
ROUTE_BODY = json.dumps({"model": "bench/core:route", "stream": True,
                         "messages": [{"role": "user", "content": "Agent {worker}: name one benchmark."}]})
# One call straight to the provider: the baseline of a panel (alone, or five at once as its fan-out).
DIRECT_BODY = json.dumps({"model": MEMBERS[0], "messages": [{"role": "user", "content": "x"}]})
# The provider's own stream: the baseline of route mode and of its floor.
STREAM_BODY = json.dumps({**json.loads(DIRECT_BODY), "stream": True})
SECTION_MARKER = "## "  # a seat's section starts with `## <label> — <alias>` (P-13)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def load(
    url: str, body: str, concurrency: int, seconds: float, requests: int = 10**9, marker: str | None = None,
    fanout: int = 1,
) -> dict[str, Any]:
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.loadgen",
        url,
        "--body",
        body,
        "--concurrency",
        str(concurrency),
        "--seconds",
        str(seconds),
        "--requests",
        str(requests),
    ]
    if marker:
        cmd += ["--marker", marker]
    if fanout > 1:
        cmd += ["--fanout", str(fanout)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def summary(result: dict[str, Any]) -> dict[str, float]:
    lat = [x * 1000 for x in result["latencies"]]
    errors = result["errors"]
    out = {
        "n": len(lat),
        "errors": len(errors),
        "p50_ms": pct(lat, 0.5),
        "p95_ms": pct(lat, 0.95),
        "rate_per_s": len(lat) / float(result["wall"]),
    }
    for key in ("first_byte", "marked"):
        values = [x * 1000 for x in result.get(key) or []]
        if values:
            out[f"{key}_p50_ms"], out[f"{key}_p95_ms"] = pct(values, 0.5), pct(values, 0.95)
    return out


class Cost:
    """What the stack spent on a run, per request: CPU milliseconds (all its processes together; on a shared
    machine far steadier than latency) and messages through the NATS server (in + out: the bus hops)."""

    def __init__(self, pids: dict[str, int], monitor: str | None) -> None:
        self.pids, self.monitor = pids, monitor

    def _msgs(self) -> int:
        if not self.monitor:
            return 0
        with httpx.Client(timeout=5) as client:
            varz = client.get(f"{self.monitor}/varz").json()
        return int(varz.get("in_msgs", 0)) + int(varz.get("out_msgs", 0))

    def of(self, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """`run()` (a load), its summary with `cpu_ms_per_request` and `bus_msgs_per_request` added."""
        cpu0, msgs0 = cpu_seconds(self.pids), self._msgs()
        out: dict[str, Any] = summary(run())
        cpu1, n = cpu_seconds(self.pids), max(1.0, out["n"])
        each = {k: round(1000 * (cpu1[k] - cpu0[k]) / n, 2) for k in self.pids}
        out["cpu_ms_per_request"] = round(sum(each.values()), 2)
        out["cpu_ms_per_request_by_process"] = each
        out["bus_msgs_per_request"] = round((self._msgs() - msgs0) / n, 1)
        return out


def settle(pids: dict[str, int], quiet: float = 0.05, window_s: float = 0.5, limit_s: float = 180.0) -> float:
    """Wait until the stack is quiet (all its processes together under `quiet` of a core), so that a
    latency run does not share the machine with the catch-up of a run before it (the ledger folding a
    backlog, the seater folding seeded seats). Returns the seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        before = sum(cpu_seconds(pids).values())
        time.sleep(window_s)
        if sum(cpu_seconds(pids).values()) - before < quiet * window_s:
            break
    return time.monotonic() - start


def cpu_ticks() -> list[int] | None:
    """The machine's CPU time so far, by kind (Linux `/proc/stat`); None elsewhere."""
    try:
        with open("/proc/stat") as stat:
            return [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None


def python_speed(repeats: int = 5) -> float:
    """Milliseconds for a fixed pure-Python workload (JSON in and out, dict and string work, as every service
    here does), the median of `repeats`. On a shared machine the same code runs up to twice as fast one hour
    as the next, and steal does not show all of it (CPU clocks and caches are shared too): comparing this
    figure between two reports says whether the machine or the code changed."""
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
             "choices": [{"index": 0, "delta": {"content": "a piece of an answer"}, "finish_reason": None}]}
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for n in range(5_000):
            data = json.loads(json.dumps(chunk))
            data["choices"][0]["delta"]["content"] += str(n)
            "".join(sorted(data))
        times.append((time.perf_counter() - start) * 1000)
    return pct(times, 0.5)


def steal_share(before: list[int] | None, after: list[int] | None) -> float | None:
    """The share of CPU time the hypervisor gave to other guests (steal, the 8th field) over a run: on a
    shared virtual machine it makes the same code slower from one run to the next, so the report says it."""
    if not before or not after or len(before) < 8:
        return None
    spent = [b - a for a, b in zip(before, after, strict=False)]
    busy = sum(spent) - spent[3] - spent[4]  # all but idle and iowait
    return spent[7] / busy if busy > 0 else None


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    out = {}
    for name, pid in pids.items():
        try:
            t = psutil.Process(pid).cpu_times()
            out[name] = t.user + t.system
        except psutil.Error:
            out[name] = 0.0
    return out


def stack_processes(stack: Stack) -> dict[str, int]:
    """Every process of the stack by name: its services, nats-server and the zygote (what the forked
    services share is counted in its memory too)."""
    pids = {c.name: c.proc.pid for c in stack.children if c.proc}
    pids["nats-server"] = stack.nats.proc.pid if stack.nats and stack.nats.proc else 0
    if stack.zygote is not None and stack.zygote.proc is not None:
        pids["zygote"] = stack.zygote.proc.pid
    return pids


def configure(url: str, base: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as client:

        def post(path: str, body: dict[str, object]) -> None:
            resp = client.post(path, json=body)
            if resp.status_code != 200:
                raise RuntimeError(f"{path}: {resp.status_code} {resp.text}")

        post("/api/endpoint", {"name": "fake", "base": base})
        for served in MEMBERS + EXPLORERS:
            post("/api/models", {"served": served, "endpoint": "fake", "context_window": 128_000,
                                 "tools": True})
        post("/api/collection", {"name": "core", "members": MEMBERS, "description": "benchmark panel"})


async def seed_ledger(stack: Stack, seats: int) -> float:
    """Publish `seats` seat completions (five per panel) straight onto the event stream, as an operator."""
    nc = await bus.connect(stack.nats_url or "", "bench-seed", stack.login(ADMIN))
    js = nc.jetstream()
    start = time.perf_counter()
    aliases = MEMBERS + EXPLORERS
    pending = []
    for i in range(seats // 5):
        panel = f"p20260101-{i // 10000:06d}-{i % 10000:04x}"
        plans = [
            SeatPlan(
                call=f"{panel}.member{k + 1}",
                seat="member",
                alias=aliases[(i + k) % len(aliases)],
                served=aliases[(i + k) % len(aliases)],
                endpoint="fake",
                connection="fake",
            )
            for k in range(5)
        ]
        at = datetime(2026, 1, 1, tzinfo=UTC)
        events: list[EventBase] = [
            PanelSeated(
                id=f"seated:{panel}",
                at=at,
                panel=panel,
                collection="bench/core",
                shape="general",
                shape_by="seed",
                seats=plans,
            )
        ]
        events += [
            SeatCompleted(
                id=f"seat:{p.call}",
                at=at,
                call=p.call,
                panel=panel,
                seat="member",
                alias=p.alias,
                served=p.served,
                endpoint="fake",
                connection="fake",
                task="seeded (bench/core, general)",
                status="ok",
                seconds=0.2,
                answer="seeded answer " * 10,
                tokens_in=10,
                tokens_out=30,
            )
            for p in plans
        ]
        for event in events:
            pending.append(
                js.publish_async(
                    event.subject(),
                    event.model_dump_json(by_alias=True).encode(),
                    headers={"Nats-Msg-Id": event.id},
                )
            )
        if len(pending) > 5000:
            await asyncio.gather(*pending)
            pending.clear()
    await asyncio.gather(*pending)
    # Wait until the ledger has folded all of it.
    info = await js.stream_info("BENCH_EVENTS")
    while True:
        reply = json.loads((await nc.request("bench.rpc.ledger.status", b"{}", timeout=600)).data)
        if reply.get("seq", 0) >= info.state.last_seq:
            break
        await asyncio.sleep(0.5)
    await nc.close()
    return time.perf_counter() - start


def soak(panel_url: str, minutes: float, pids: dict[str, int]) -> tuple[Any, Any]:
    """Panels and route turns at 32 concurrent, a minute of each in turn, for `minutes`: the memory once
    warm (after the first two minutes) and at the end (settled), or (None, None) for no soak."""
    if minutes <= 0:
        return None, None
    stack_pids = {k: v for k, v in pids.items() if k != "fake-provider"}
    end, warm, rounds = time.monotonic() + minutes * 60, None, 0
    while time.monotonic() < end:
        body = BODY if rounds % 2 == 0 else ROUTE_BODY
        load(panel_url, body, 32, max(1.0, min(60.0, end - time.monotonic())))
        rounds += 1
        if rounds == 2:
            settle(pids)
            warm = snapshot(stack_pids)
    settle(pids)
    return warm or snapshot(stack_pids), snapshot(stack_pids)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each throughput run")
    parser.add_argument("--samples", type=int, default=60, help="requests in each concurrency-1 run")
    parser.add_argument("--seed-seats", type=int, default=100_000)
    parser.add_argument("--callers", type=int, default=2)
    parser.add_argument("--soak-minutes", type=float, default=float(os.environ.get("BENCH_SOAK_MINUTES", 0)),
                        help="panels and route turns at c=32 for this long after the runs (memory growth)")
    parser.add_argument("--only", choices=("all", "route"), default="all",
                        help="route: only route mode's runs (c=1, c=32), --repeats times on one stack, with "
                             "its floor and the anchor's route turns in each round")
    parser.add_argument("--repeats", type=int, default=3,
                        help="with --only route: rounds, reported as medians")
    args = parser.parse_args()
    if args.only == "route":
        route_only(args)
        return

    home = Path(tempfile.mkdtemp(prefix="bench-home-"))
    provider = FakeProvider(models={m: {"latency_ms": args.latency_ms} for m in MEMBERS + EXPLORERS}).start()
    stack = Stack(home=home, port=free_port(), replicas={"caller": args.callers})
    report: dict[str, Any] = {"latency_ms": args.latency_ms, "callers": args.callers}
    try:
        stack.start()
        configure(stack.url, provider.base_url)
        direct_url = provider.base_url + "/chat/completions"
        panel_url = stack.url + "/v1/chat/completions"
        stack_pids = stack_processes(stack)
        pids = {**stack_pids, "fake-provider": provider.pid}
        settle(pids)
        idle = snapshot(stack_pids)
        monitor = f"http://127.0.0.1:{stack.nats.monitor_port}" if stack.nats else None
        cost = Cost(stack_pids, monitor)
        load(panel_url, BODY, 4, 3.0)  # warm-up: connections, first plans, JIT-free but cache-warm
        ticks_before, speed_before = cpu_ticks(), python_speed()
        with RssSampler(stack_pids) as rss:
            settle(pids)
            direct1 = summary(load(direct_url, DIRECT_BODY, 1, 600, args.samples))
            panel1 = cost.of(partial(load, panel_url, BODY, 1, 600, args.samples))
            fanout1 = summary(load(direct_url, DIRECT_BODY, 1, 600, args.samples, fanout=SEATS))
            direct128 = summary(load(direct_url, DIRECT_BODY, 128, args.seconds))
            panel32 = summary(load(panel_url, BODY, 32, args.seconds))
            direct_stream32 = summary(load(direct_url, STREAM_BODY, 32, args.seconds, marker="data:"))
            anthropic32 = summary(
                load(stack.url + "/v1/messages", ANTHROPIC_BODY, 32, args.seconds, marker=SECTION_MARKER)
            )
            route_ttfb = route_runs(direct_url, panel_url, args.samples, args.seconds, pids, cost)
            agent_turn = agent_turn_runs(direct_url, panel_url, args.samples, pids)
            settle(pids)
            floor = floor_runs(direct_url, args.samples, args.seconds)
            settle(pids)
            cpu0 = cpu_seconds(pids)
            with RssSampler(stack_pids) as rss128:
                panel128 = summary(load(panel_url, BODY, 128, args.seconds))
            cpu1 = cpu_seconds(pids)
            seeded_s = (
                asyncio.run(seed_ledger(stack, args.seed_seats)) if args.seed_seats else 0.0
            )
            settle(pids)
            direct1b = summary(load(direct_url, DIRECT_BODY, 1, 600, args.samples))
            panel1b = summary(load(panel_url, BODY, 1, 600, args.samples))
            settle(pids)
            panel_floor = panel_floor_runs(direct_url, args.samples)  # its processes are gone after it
            settle(pids)
            anchor = beside_anchor(direct_url, args.samples, args.seconds)
            warm, soaked = soak(panel_url, args.soak_minutes, pids)
        steal = steal_share(ticks_before, cpu_ticks())
        after_label = f"after a {args.soak_minutes:g}-minute soak" if warm else "after the runs"
        memory = memory_report(idle, rss.peaks, soaked or snapshot(stack_pids), after_label, warm,
                               rss.pss_peaks)
        speed_after = python_speed()
        over = panel1["p50_ms"] - direct1["p50_ms"]
        over_b = panel1b["p50_ms"] - direct1b["p50_ms"]
        report.update(
            {
                "direct_c1": direct1,
                "panel_c1": panel1,
                "direct_fanout_c1": fanout1,
                "overhead_fanout_p50_ms": panel1["p50_ms"] - fanout1["p50_ms"],
                "direct_c128": direct128,
                "panel_c32": panel32,
                "panel_c128": panel128,
                "direct_stream_c32": direct_stream32,
                "anthropic_stream_c32": anthropic32,
                "route_ttfb": route_ttfb,
                "agent_turn_c1": agent_turn,
                "route_floor": floor,
                "panel_floor": panel_floor,
                "anchor": anchor,
                "direct_c1_seeded": direct1b,
                "panel_c1_seeded": panel1b,
                "overhead_p50_ms": over,
                "overhead_p95_ms": panel1["p95_ms"] - direct1["p95_ms"],
                "overhead_p50_ms_seeded": over_b,
                "seeded_seats": args.seed_seats,
                "seed_seconds": seeded_s,
                "overhead_ratio_seeded": over_b / over if over > 0 else float("nan"),
                "memory": memory,
                "peak_rss_mb_c128": round(rss128.peaks.total / 2**20, 1),
                "peak_pss_mb_c128": round(rss128.pss_peaks.total / 2**20, 1),
                "steal_share": steal,
                "python_speed_ms": [round(speed_before, 1), round(speed_after, 1)],
                "cpu_ms_per_panel_c128": {
                    k: round(1000 * (cpu1[k] - cpu0[k]) / max(1, panel128["n"]), 2) for k in pids
                },
            }
        )
    finally:
        stack.stop()
        provider.stop()
    print_report(report)
    out = Path("benchmarks/results")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"panel-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"\nfull report: {path}")


def beside_anchor(direct_url: str, samples: int, seconds: float) -> dict[str, Any] | None:
    """The anchor's runs, or why they could not be made: the figures of ours measured before stay reported."""
    if not anchor_installed():
        return None
    try:
        return anchor_runs(direct_url, samples, seconds)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:1000]}


def print_anchor(r: dict[str, Any]) -> None:
    """The anchor's figures, each beside this project's from the same run."""
    anchor, ours = r["anchor"], r["route_ttfb"]
    for c, pair in anchor["route"].items():
        d, a = pair["direct"], pair["anchor"]
        mine = ours[c]["route"]["p50_ms"] - ours[c]["direct"]["p50_ms"]
        mine_first = ours[c]["route"]["first_byte_p50_ms"] - ours[c]["direct"]["first_byte_p50_ms"]
        print(f"  {anchor['name']} (the anchor, benchmarks/anchor.py), route mode, streamed, {c}: "
              f"overhead p50 first byte {a['first_byte_p50_ms'] - d['first_byte_p50_ms']:.1f} ms, total "
              f"{a['p50_ms'] - d['p50_ms']:.1f} ms, errors {a['errors']:.0f} "
              f"(ours: {mine_first:.1f} / {mine:.1f} ms)")
    one = anchor["panel"]["c1"]
    print(f"  {anchor['name']}, panel, c=1: overhead p50 against {SEATS} direct calls at once "
          f"{one['anchor']['p50_ms'] - one['fanout']['p50_ms']:.1f} ms "
          f"(ours: {r['overhead_fanout_p50_ms']:.1f} ms)")
    for c, mine in (("c32", r["panel_c32"]), ("c128", r["panel_c128"])):
        a = anchor["panel"][c]["anchor"]
        print(f"  {anchor['name']}, panels, {c}: {a['rate_per_s']:.1f}/s, errors {a['errors']:.0f} of "
              f"{a['n'] + a['errors']:.0f} (ours: {mine['rate_per_s']:.1f}/s, errors {mine['errors']:.0f})")


def agent_turn_runs(direct_url: str, panel_url: str, samples: int, pids: dict[str, int]) -> dict[str, Any]:
    """An agent-sized route turn at concurrency 1, `samples` turns, against the provider sent the same."""
    settle(pids)
    direct = summary(load(direct_url, agent_body(MEMBERS[0]), 1, 600, samples, "data:"))
    route = summary(load(panel_url, agent_body("bench/core:route"), 1, 600, samples, "data:"))
    return {"kilobytes": len(agent_body("x")) // 1024, "direct": direct, "route": route}


def route_runs(direct_url: str, panel_url: str, samples: int, seconds: float, pids: dict[str, int],
               cost: Cost) -> dict[str, Any]:
    """Route mode, streamed, at 1 and 32 concurrent conversations, each against the provider's own stream."""
    out = {}
    for c in (1, 32):
        # At 1, `samples` turns; at 32, the whole run: `samples` turns there would be little more than the
        # burst of 32 conversations opening at once, not the agents' steady turns.
        turns = samples if c == 1 else 10**9
        settle(pids)
        out[f"c{c}"] = {
            "direct": summary(load(direct_url, STREAM_BODY, c, seconds, turns, "data:")),
            "route": cost.of(partial(load, panel_url, ROUTE_BODY, c, seconds, turns, "data:")),
        }
    return out


def floor_runs(direct_url: str, samples: int, seconds: float) -> dict[str, Any]:
    """The same streamed turns through route mode's hops with nothing of the product on them
    (`benchmarks/floor.py`), each concurrency against the provider's own stream in the same run."""
    out = {}
    with floor_path(direct_url) as floor_url:
        load(floor_url, STREAM_BODY, 4, 1.0, 8, "data:")  # warm-up: connections
        for c in (1, 32):
            turns = samples if c == 1 else 10**9
            out[f"c{c}"] = {
                "direct": summary(load(direct_url, STREAM_BODY, c, seconds, turns, "data:")),
                "floor": summary(load(floor_url, STREAM_BODY, c, seconds, turns, "data:")),
            }
    return out


def route_only(args: argparse.Namespace) -> None:
    """`--only route`: route mode's runs `--repeats` times on one stack, each figure's median printed (a
    shared machine moves single runs; CPU ms per turn by process is the steadiest figure)."""
    home = Path(tempfile.mkdtemp(prefix="bench-home-"))
    provider = FakeProvider(models={m: {"latency_ms": args.latency_ms} for m in MEMBERS + EXPLORERS}).start()
    stack = Stack(home=home, port=free_port(), replicas={"caller": args.callers})
    rounds: list[dict[str, Any]] = []
    floors: list[dict[str, Any]] = []
    anchors: list[dict[str, Any]] = []
    direct_url = provider.base_url + "/chat/completions"
    try:
        stack.start()
        configure(stack.url, provider.base_url)
        stack_pids = stack_processes(stack)
        pids = {**stack_pids, "fake-provider": provider.pid}
        monitor = f"http://127.0.0.1:{stack.nats.monitor_port}" if stack.nats else None
        panel_url = stack.url + "/v1/chat/completions"
        load(panel_url, BODY, 4, 3.0)  # warm-up
        with contextlib.ExitStack() as beside:
            anchor_url = None
            if anchor_installed():
                anchor_url = beside.enter_context(anchor_path(provider.base_url, MEMBERS, EXPLORERS))
                anchor_url += "/v1/chat/completions"
                warm_anchor(anchor_url)
            speed_before = python_speed()
            for _ in range(args.repeats):
                rounds.append(route_runs(direct_url, panel_url, args.samples, args.seconds, pids,
                                         Cost(stack_pids, monitor)))
                settle(pids)
                floors.append(floor_runs(direct_url, args.samples, args.seconds))
                if anchor_url is not None:
                    settle(pids)
                    anchors.append(route_through(anchor_url, direct_url, args.samples, args.seconds))
            speed_after = python_speed()
    finally:
        stack.stop()
        provider.stop()
    print(f"\nBenchwarmers route benchmark (provider latency {args.latency_ms} ms, {args.callers} callers, "
          f"{os.cpu_count()} cores): medians of {len(rounds)} rounds")
    for c in ("c1", "c32"):
        def median(of: Callable[[dict[str, Any]], float], c: str = c) -> float:
            return pct([of(r[c]) for r in rounds], 0.5)

        first = median(lambda p: p["route"]["first_byte_p50_ms"] - p["direct"]["first_byte_p50_ms"])
        total = median(lambda p: p["route"]["p50_ms"] - p["direct"]["p50_ms"])
        cpu = median(lambda p: p["route"]["cpu_ms_per_request"])
        msgs = median(lambda p: p["route"]["bus_msgs_per_request"])
        errors = sum(r[c]["route"]["errors"] for r in rounds)
        spent = [r[c]["route"]["cpu_ms_per_request_by_process"] for r in rounds]
        by_process = {k: round(pct([each[k] for each in spent], 0.5), 2) for k in spent[0]}
        print(f"  route mode, streamed, {c}: overhead p50 first byte {first:.1f} ms, total {total:.1f} ms; "
              f"{cpu:.2f} CPU ms / {msgs:.1f} NATS msgs a turn; errors {errors}")
        print("    CPU ms a turn by process: " + ", ".join(f"{k} {v}" for k, v in by_process.items()))
        bare_first = pct([f[c]["floor"]["first_byte_p50_ms"] - f[c]["direct"]["first_byte_p50_ms"]
                          for f in floors], 0.5)
        bare_total = pct([f[c]["floor"]["p50_ms"] - f[c]["direct"]["p50_ms"] for f in floors], 0.5)
        print(f"    its floor (the same hops bare, benchmarks/floor.py): first byte {bare_first:.1f} ms, "
              f"total {bare_total:.1f} ms")
        if anchors:
            theirs = [a[c]["anchor"]["p50_ms"] - a[c]["direct"]["p50_ms"] for a in anchors]
            ours = [r[c]["route"]["p50_ms"] - r[c]["direct"]["p50_ms"] for r in rounds]
            their_first = pct([a[c]["anchor"]["first_byte_p50_ms"] - a[c]["direct"]["first_byte_p50_ms"]
                               for a in anchors], 0.5)
            print(f"    {NAME} (the anchor, benchmarks/anchor.py): first byte {their_first:.1f} ms, total "
                  f"{pct(theirs, 0.5):.1f} ms, errors {sum(a[c]['anchor']['errors'] for a in anchors)}; "
                  "total by round, ours / the anchor's: "
                  + ", ".join(f"{o:.1f} / {t:.1f}" for o, t in zip(ours, theirs, strict=True)))
    print(f"  machine speed: a fixed Python workload took {speed_before:.1f} ms before the runs and "
          f"{speed_after:.1f} ms after (compare it between reports: a slower machine slows every figure)")


PANEL_FLOORS = {"design": "the design", "no_plan_hop": "without the seater's hop",
                "core_nats": "calls and answers over core NATS (nothing stored)", "neither": "both",
                "seater_queues": "the seater queueing the calls"}


def print_report(r: dict[str, Any]) -> None:
    def row(label: str, s: dict[str, float]) -> str:
        return (
            f"  {label:<36} n={s['n']:<6.0f} p50={s['p50_ms']:8.1f} ms  p95={s['p95_ms']:8.1f} ms  "
            f"rate={s['rate_per_s']:7.1f}/s  errors={s['errors']:.0f}"
        )

    print(
        f"\nBenchwarmers panel benchmark (provider latency {r['latency_ms']} ms, 3 members + 2 explorers, "
        f"{r['callers']} callers, {os.cpu_count()} cores)"
    )
    for key, label in [
        ("direct_c1", "direct to provider, c=1 (baseline)"),
        ("panel_c1", "panel, c=1"),
        ("direct_fanout_c1", f"direct, {SEATS} at once, c=1"),
        ("direct_c128", "direct to provider, c=128 (client)"),
        ("panel_c32", "panel, c=32"),
        ("panel_c128", "panel, c=128"),
        ("direct_c1_seeded", "direct, c=1, after seeding"),
        ("panel_c1_seeded", "panel, c=1, after seeding"),
    ]:
        if key in r:
            print(row(label, r[key]))
    d, a = r["direct_stream_c32"], r["anthropic_stream_c32"]
    print(
        f"  streamed, c=32: provider first token p50 {d['first_byte_p50_ms']:.1f} ms "
        f"(p95 {d['first_byte_p95_ms']:.1f}); Anthropic panel first byte p50 {a['first_byte_p50_ms']:.1f} ms "
        f"(p95 {a['first_byte_p95_ms']:.1f}), first seat section p50 {a['marked_p50_ms']:.1f} ms "
        f"(p95 {a['marked_p95_ms']:.1f}), errors {a['errors']:.0f}"
    )
    for c, pair in r["route_ttfb"].items():
        d, t = pair["direct"], pair["route"]
        over50 = t["first_byte_p50_ms"] - d["first_byte_p50_ms"]
        print(
            f"  route mode, streamed, {c}: first byte p50 {t['first_byte_p50_ms']:.1f} ms (p95 "
            f"{t['first_byte_p95_ms']:.1f}) vs provider {d['first_byte_p50_ms']:.1f} (p95 "
            f"{d['first_byte_p95_ms']:.1f}): overhead p50 {over50:.1f} ms, "
            f"p95 {t['first_byte_p95_ms'] - d['first_byte_p95_ms']:.1f} ms, {t['n']:.0f} turns, "
            f"errors {t['errors']:.0f}"
        )
        print(
            f"  route mode, streamed, {c}: total p50 {t['p50_ms']:.1f} ms (p95 {t['p95_ms']:.1f}) vs "
            f"provider {d['p50_ms']:.1f} (p95 {d['p95_ms']:.1f}): total overhead p50 "
            f"{t['p50_ms'] - d['p50_ms']:.1f} ms, p95 {t['p95_ms'] - d['p95_ms']:.1f} ms"
        )
    if "agent_turn_c1" in r:
        d, t = r["agent_turn_c1"]["direct"], r["agent_turn_c1"]["route"]
        size = f"{r['agent_turn_c1']['kilobytes']} KB, {AGENT_TOOLS} tools"
        print(
            f"  route mode, an agent-sized turn ({size}), c1: "
            f"overhead p50 first byte {t['first_byte_p50_ms'] - d['first_byte_p50_ms']:.1f} ms, total "
            f"{t['p50_ms'] - d['p50_ms']:.1f} ms, {t['n']:.0f} turns, errors {t['errors']:.0f}"
        )
    for c, pair in r.get("route_floor", {}).items():
        d, t = pair["direct"], pair["floor"]
        first, total = t["first_byte_p50_ms"] - d["first_byte_p50_ms"], t["p50_ms"] - d["p50_ms"]
        print(
            f"  route mode's floor (its hops bare, benchmarks/floor.py), streamed, {c}: overhead p50 "
            f"first byte {first:.1f} ms, total {total:.1f} ms, errors {t['errors']:.0f}"
        )
    print(
        f"  overhead p50 {r['overhead_p50_ms']:.1f} ms, p95 {r['overhead_p95_ms']:.1f} ms"
        " (panel − direct, c=1)"
    )
    if "overhead_fanout_p50_ms" in r:
        print(f"  overhead p50 against {SEATS} direct calls at once (a panel's fan-out, the provider's own "
              f"share of it taken out): {r['overhead_fanout_p50_ms']:.1f} ms")
    if "panel_floor" in r:
        floors = r["panel_floor"]
        shares = ", ".join(f"{PANEL_FLOORS[k]} {v['overhead_p50_ms']:.1f} ms"
                           for k, v in floors.items() if k in PANEL_FLOORS)
        print(f"  a panel's floor (its hops bare, benchmarks/panel_floor.py), c=1, overhead p50 against "
              f"{SEATS} direct calls at once: {shares}")
    if r.get("anchor") and "error" in r["anchor"]:
        print(f"  the anchor (benchmarks/anchor.py) could not be run: {r['anchor']['error']}")
    elif r.get("anchor"):
        print_anchor(r)
    else:
        print("  the anchor (benchmarks/anchor.py): not run, its venv is not installed "
              "(make bench installs it)")
    costs = [("panel, c=1", r["panel_c1"])]
    costs += [(f"route turn, {c}", p["route"]) for c, p in r["route_ttfb"].items()]
    print("  the stack's cost per request (CPU ms, all its processes; NATS messages in + out): " + ", ".join(
        f"{label} {s['cpu_ms_per_request']:.2f} ms / {s['bus_msgs_per_request']:.1f} msgs"
        for label, s in costs))
    print(
        f"  overhead p50 after {r['seeded_seats']} seats in the ledger: {r['overhead_p50_ms_seeded']:.1f} ms "
        f"(ratio {r['overhead_ratio_seeded']:.2f}; seeding took {r['seed_seconds']:.1f} s)"
    )
    cpu = r["cpu_ms_per_panel_c128"]
    print("  CPU ms per panel at c=128: " + ", ".join(f"{k} {v}" for k, v in cpu.items()))
    print_memory(r["memory"], r["peak_rss_mb_c128"], r.get("peak_pss_mb_c128"))
    if r.get("steal_share") is not None:
        stolen = 100 * r["steal_share"]
        print(f"  CPU time stolen by the hypervisor during the runs: {stolen:.1f}% of busy time "
              "(above a few percent, every figure here is slower than the code)")
    if r.get("python_speed_ms"):
        before, after = r["python_speed_ms"]
        print(f"  machine speed: a fixed Python workload took {before:.1f} ms before the runs and "
              f"{after:.1f} ms after (compare it between reports: a slower machine slows every figure)")


def print_memory(m: dict[str, Any], peak_c128: float, pss_c128: float | None = None) -> None:
    print(f"  memory, MB (idle / peak / {m['after']}), RSS | PSS:")
    for name, v in m["per_process_mb"].items():
        growth = m.get("soak_growth_mb", {}).get(name)
        soaked = f"  (RSS grew {growth:+.1f} over the soak once warm)" if growth is not None else ""
        p = m["per_process_pss_mb"][name]
        pss_peak = f"{p['peak']:6.1f}" if p["peak"] is not None else "     -"
        print(f"    {name:<14} {v['idle']:7.1f} / {v['peak']:7.1f} / {v['after']:7.1f} | "
              f"{p['idle']:6.1f} / {pss_peak} / {p['after']:6.1f}{soaked}")
    rss, pss = m["total_rss_mb"], m["total_pss_mb"]
    print(f"    {'stack (RSS)':<14} {rss['idle']:7.1f} / {rss['peak']:7.1f} / {rss['after']:7.1f}"
          f"  (peak during panels at c=128: {peak_c128:.1f})")
    pss_peak = f"{pss['peak']:7.1f}" if pss.get("peak") is not None else "      -"
    at_c128 = f", peak during panels at c=128: {pss_c128:.1f}" if pss_c128 is not None else ""
    print(f"    {'stack (PSS)':<14} {pss['idle']:7.1f} / {pss_peak} / {pss['after']:7.1f}"
          f"  (shared pages counted once: what the machine gives the stack{at_c128})")


if __name__ == "__main__":
    main()

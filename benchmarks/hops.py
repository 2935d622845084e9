"""Where a route turn's and a panel's time goes, hop by hop, at concurrency 1.

`make bench` says how long a turn takes against the provider; this says where in the stack the time is
spent. Every Python process of the run (the stack, the fake provider, the load client) stamps named points
as they are called (`benchmarks/hops_marks.py`, loaded through `hops_site/sitecustomize.py`, so the product
carries no tracing of its own) into one file, with the wall clock all processes share; for each point the
median over the requests of when it was first and last reached, from the moment the client sent, is
printed in order. The gap between two lines in different processes is a hop (a write, a wake, a read); in
one process, that process's work. Stamps cost a few microseconds each, which the figures include.

    python -m benchmarks.hops                 # a route turn and a panel, 60 requests each (about 1 minute)
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from benchmarks.panel import BODY, EXPLORERS, MEMBERS, ROUTE_BODY, STREAM_BODY, configure, stack_processes
from cli.stack import Stack
from shared.natsserver import free_port
from tests.fakes.provider import FakeProvider

SITE = Path(__file__).parent / "hops_site"
ROOT = Path(__file__).parent.parent
SENT = "client sends"


def load(url: str, body: str, requests: int, marker: str | None = None) -> None:
    """The load client at concurrency 1, imported (not run as `__main__`) so its module is stamped."""
    cmd = [sys.executable, "-c", "from benchmarks.loadgen import main; main()", url, "--body", body,
           "--concurrency", "1", "--seconds", "600", "--requests", str(requests)]
    subprocess.run(cmd + (["--marker", marker] if marker else []), check=True, capture_output=True)


def role(process: str) -> str:
    """A service's replicas as one: a request meets whichever caller took it."""
    return re.sub(r"-\d+$", "", process)


def timeline(log: Path, names: dict[int, str]) -> list[tuple[float, float, float, str, str]]:
    """(first, last, times a request, label, process) per point, medians over the requests but the first."""
    requests: list[list[tuple[float, int, str]]] = []
    for line in log.read_text().splitlines():
        when, who, what = line.split(" ", 2)
        if what == SENT:
            requests.append([])
        if requests:
            requests[-1].append((float(when), int(who), what))
    firsts: dict[tuple[str, str], list[float]] = defaultdict(list)
    lasts: dict[tuple[str, str], list[float]] = defaultdict(list)
    counts: dict[tuple[str, str], list[int]] = defaultdict(list)
    for stamps in requests[1:]:
        start = stamps[0][0]
        seen: dict[tuple[str, str], list[float]] = defaultdict(list)
        for at, pid, label in stamps:
            if label.startswith("client") and pid in names:
                continue  # aiohttp's reads in a server of the stack or the provider: not the client's
            seen[(label, role(names.get(pid) or "client"))].append((at - start) * 1000)
        for key, offsets in seen.items():
            firsts[key].append(offsets[0])
            lasts[key].append(offsets[-1])
            counts[key].append(len(offsets))
    rows = [(statistics.median(firsts[k]), statistics.median(lasts[k]), statistics.median(counts[k]), *k)
            for k in firsts]
    return sorted(rows)


def show(title: str, rows: list[tuple[float, float, float, str, str]]) -> None:
    print(f"\n{title}: ms from the client's send (median first / last, times per request)")
    before = 0.0
    for first, last, times, label, process in rows:
        span = f"{first:8.2f}" + (f" … {last:8.2f}" if times > 1 else " " * 11)
        print(f"  {span}  (+{first - before:5.2f})  x{times:<3g} {process:<13} {label}")
        before = first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--latency-ms", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-hops-"))
    log = work / "stamps.log"
    os.environ["BENCH_HOPS_LOG"] = str(log)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(SITE), str(ROOT), os.environ.get("PYTHONPATH", "")])
    provider = FakeProvider(models={m: {"latency_ms": args.latency_ms} for m in MEMBERS + EXPLORERS}).start()
    stack = Stack(home=work / "home", port=free_port(), replicas={"caller": 2})
    try:
        stack.start()
        configure(stack.url, provider.base_url)
        names = {pid: name for name, pid in stack_processes(stack).items()}
        names[provider.pid] = "fake-provider"
        url = stack.url + "/v1/chat/completions"
        runs = [("the provider directly, streamed", provider.base_url + "/chat/completions", STREAM_BODY,
                 "data:"), ("a route turn, streamed", url, ROUTE_BODY, "data:"), ("a panel", url, BODY, None)]
        for title, target, body, marker in runs:
            load(target, body, 4, marker)  # warm-up: connections, a conversation opened
            log.write_bytes(b"")
            load(target, body, args.requests, marker)
            show(title, timeline(log, names))
    finally:
        stack.stop()
        provider.stop()


if __name__ == "__main__":
    main()

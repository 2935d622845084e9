"""`python -m benchmarks.up_memory`: `bench up`'s memory idle, every process of it, on a fresh data folder.

Starts `bench up` in a temporary home on a free port, waits `--settle` seconds (25), prints each process's
RSS and PSS (the supervisor itself, nats-server and every service) and the totals, then stops it with
SIGTERM as `bench down` does. `make bench` measures its own stack under load; this one is the stack a
user runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks.memory import MB, snapshot
from shared.natsserver import free_port

ROOT = Path(__file__).resolve().parent.parent


def process_names(pid: int) -> dict[str, int]:
    """`bench up` and its children by a readable name: the supervisor, nats-server, `<service>-<n>`."""
    names = {"supervisor": pid}
    counts: dict[str, int] = {}
    for child in psutil.Process(pid).children(recursive=True):
        cmd = child.cmdline()
        if cmd[1:3] == ["-m", "services"]:  # the composition root: named by its first service
            service = cmd[3]
        else:
            service = cmd[2].rpartition(".")[2] if cmd[1:2] == ["-m"] else Path(cmd[0]).name
        names[f"{service}-{counts.get(service, 0)}"] = child.pid
        counts[service] = counts.get(service, 0) + 1
    return names


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--settle", type=float, default=25.0, help="seconds between start and the sample")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-up-memory-") as home:
        env = {**os.environ, "BENCHWARMERS_HOME": home, "BENCH_PORT": str(free_port())}
        with open(Path(home) / "up.log", "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "cli.main", "up"], cwd=ROOT, env=env,
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        try:
            time.sleep(args.settle)
            if proc.poll() is not None:
                raise SystemExit(f"bench up ended ({proc.returncode}): {(Path(home) / 'up.log').read_text()}")
            shot = snapshot(process_names(proc.pid))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
    print(f"bench up, idle {args.settle:g} s after start, MB (RSS / PSS):")
    for name in shot.rss:
        print(f"  {name:16} {shot.rss[name] / MB:7.1f} / {shot.pss[name] / MB:7.1f}")
    print(f"  {'total':16} {shot.total_rss() / MB:7.1f} / {shot.total_pss() / MB:7.1f}")


if __name__ == "__main__":
    main()

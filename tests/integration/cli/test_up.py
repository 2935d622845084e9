"""The real `bench up`: it serves, restarts a killed service, and leaves nothing behind on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from cli.stack import SERVICES
from shared.natsserver import free_port

BENCH = Path(sys.executable).with_name("bench")
READY_S = 180.0


def health_ok(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).json().get("ok") is True
    except (httpx.HTTPError, ValueError):
        return False


def wait_until(
    what: str, check: Callable[[], bool], timeout: float, proc: subprocess.Popen[bytes], log: Path
) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return
        if proc.poll() is not None:
            pytest.fail(f"bench up exited with {proc.returncode} waiting for {what}:\n{log.read_text()}")
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}:\n{log.read_text()[-3000:]}")


def service_children(parent: psutil.Process) -> dict[str, psutil.Process]:
    found = {}
    for child in parent.children():
        with contextlib.suppress(psutil.NoSuchProcess):
            cmd = child.cmdline()
            for service in SERVICES:
                if f"services.{service}" in cmd:
                    found[service] = child
    return found


@pytest.fixture
def bench_up(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    if not BENCH.exists():
        pytest.fail(f"{BENCH} is missing: run `make test` (it installs the project into .venv)")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "BENCH_NATS_URL", "BENCH_SCHEDULER")}
    env.update({"BENCHWARMERS_HOME": str(tmp_path / "home"), "BENCH_PORT": str(port)})
    log = tmp_path / "bench-up.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(BENCH), "up"], env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield proc, f"http://127.0.0.1:{port}", log
    finally:
        # Whatever the test did, nothing of ours survives it: children first, by PID, then `bench up`.
        if proc.poll() is None:
            leftovers: list[psutil.Process] = []
            with contextlib.suppress(psutil.NoSuchProcess):
                leftovers = psutil.Process(proc.pid).children(recursive=True)
            for child in leftovers:
                with contextlib.suppress(psutil.NoSuchProcess):
                    child.kill()
            proc.kill()
            proc.wait(10)


def test_bench_up_serves_restarts_a_killed_service_and_stops_clean(
    bench_up: tuple[subprocess.Popen[bytes], str, Path], tmp_path: Path
) -> None:
    proc, url, log = bench_up
    wait_until("the gateway's /health", lambda: health_ok(url), READY_S, proc, log)
    # `bench up` prints its banner once it has seen every service ready, a moment after /health answers.
    wait_until("the banner", lambda: f"Benchwarmers is up at {url}" in log.read_text(), READY_S, proc, log)
    assert f"logs: {tmp_path / 'home' / 'logs'}" in log.read_text()

    parent = psutil.Process(proc.pid)
    children = parent.children()
    services = service_children(parent)
    assert set(services) == set(SERVICES)
    nats = [c for c in children if c.name() == "nats-server"]
    assert len(nats) == 1

    victim = services["gateway"]
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    def gateway_replaced() -> bool:
        now = service_children(parent).get("gateway")
        return now is not None and now.pid != victim.pid

    wait_until("a new gateway", gateway_replaced, 30, proc, log)
    reborn = service_children(parent)["gateway"]
    wait_until("the restarted gateway's /health", lambda: health_ok(url), 60, proc, log)
    assert "gateway-0 (exit -9) died; restarted it" in log.read_text()

    everything = [*children, reborn]
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0, log.read_text()[-3000:]
    still = [p for p in everything if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert still == [], f"left behind: {still}"
    assert not health_ok(url)
    assert "stopped." in log.read_text()


def test_bench_down_stops_the_bench_up_of_this_data_folder(
    bench_up: tuple[subprocess.Popen[bytes], str, Path], tmp_path: Path
) -> None:
    proc, url, log = bench_up
    wait_until("the gateway's /health", lambda: health_ok(url), READY_S, proc, log)
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "BENCH_NATS_URL")}
    env.update({"BENCHWARMERS_HOME": str(tmp_path / "home"), "BENCH_PORT": str(free_port())})
    again = subprocess.run([str(BENCH), "up"], env=env, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    assert again.returncode == 1 and f"already running here (pid {proc.pid})" in again.stderr
    everything = psutil.Process(proc.pid).children(recursive=True)
    down = subprocess.run([str(BENCH), "down"], env=env, capture_output=True, text=True, timeout=90,
                          stdin=subprocess.DEVNULL)
    assert down.returncode == 0, down.stderr
    assert proc.wait(10) == 0
    assert [p for p in everything if p.is_running() and p.status() != psutil.STATUS_ZOMBIE] == []
    assert not (tmp_path / "home" / "bench-up.pid").exists()
    nothing = subprocess.run([str(BENCH), "down"], env=env, capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    assert nothing.returncode == 1 and "no bench up is running" in nothing.stderr

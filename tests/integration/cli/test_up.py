"""The real `bench up` (this tree's, run as `python -m cli.main up`): it serves with two seaters, restarts a
killed service and a killed NATS, leaves nothing behind on Ctrl-C or on `kill -9`, holds its data folder,
and refuses bad settings before it starts anything."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import pytest

from cli.stack import SERVICES
from shared.natsserver import free_port

ROOT = Path(__file__).resolve().parents[3]
BENCH = [sys.executable, "-m", "cli.main"]
READY_S = 120.0
GONE_S = 5.0


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


def running(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan waits for init to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def descendants(pid: int) -> dict[int, str]:
    """Every process under `pid` with its command line, found by walking /proc for parent ids."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            with contextlib.suppress(OSError):
                found[child] = (Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
                                .decode(errors="replace").strip())
            todo.append(child)
    return found


def service_of(cmd: str) -> str | None:
    """The service a command line runs: `-m services.<name>`, or the composition root named by its first."""
    words = cmd.split()
    if "services" in words[1:-1]:
        return words[words.index("services") + 1]
    return next((s for s in SERVICES if f"services.{s}" in words), None)


def services_of(pids: dict[int, str]) -> list[str]:
    return sorted(s for s in map(service_of, pids.values()) if s is not None)


@dataclass
class BenchUps:
    """Starts `bench up` processes on one data folder; whatever a test did, every process of theirs is
    killed by PID at the end (the processes seen under them too: after a `kill -9` they have no parent)."""

    home: Path
    logs: Path
    port: int = field(default_factory=free_port)
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("NATS_URL", "BENCH_NATS_URL", "BENCH_SCHEDULER", "BENCH_SEATERS")}
        env.update({"BENCHWARMERS_HOME": str(self.home), "BENCH_PORT": str(self.port), **extra})
        return env

    def start(self, **extra: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = self.logs / f"bench-up-{len(self.started)}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([*BENCH, "up"], cwd=ROOT, env=self.env(**extra), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append(proc)
        return proc, log

    def ready(self, proc: subprocess.Popen[bytes], log: Path) -> dict[int, str]:
        """Waits for the banner (printed once every replica answered); returns its processes."""
        wait_until("the banner", lambda: f"Benchwarmers is up at {self.url}" in log.read_text(), READY_S,
                   proc, log)
        assert health_ok(self.url)
        stack = descendants(proc.pid)
        self.seen.update(stack)
        return stack

    def run(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*BENCH, *args], cwd=ROOT, env=self.env(**extra), capture_output=True,
                              text=True, timeout=90, stdin=subprocess.DEVNULL)

    def cleanup(self) -> None:
        for proc in self.started:
            with contextlib.suppress(psutil.NoSuchProcess):
                self.seen.update(c.pid for c in psutil.Process(proc.pid).children(recursive=True))
        for pid in self.seen:
            if running(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


@pytest.fixture
def ups(tmp_path: Path) -> Iterator[BenchUps]:
    runs = BenchUps(home=tmp_path / "home", logs=tmp_path)
    try:
        yield runs
    finally:
        runs.cleanup()


def test_bench_up_serves_restarts_a_killed_service_and_stops_clean(ups: BenchUps) -> None:
    proc, log = ups.start()
    stack = ups.ready(proc, log)
    assert f"logs: {ups.home / 'logs'}" in log.read_text()
    assert services_of(stack) == sorted([*SERVICES, "seater"])  # two seaters
    assert [cmd for cmd in stack.values() if "nats-server" in cmd.split()[0]] != []

    victim = next(pid for pid, cmd in stack.items() if service_of(cmd) == "gateway")
    os.kill(victim, signal.SIGKILL)

    def gateway_replaced() -> bool:
        running = descendants(proc.pid).items()
        return any(service_of(cmd) == "gateway" and pid != victim for pid, cmd in running)

    wait_until("a new gateway", gateway_replaced, 30, proc, log)
    wait_until("the restarted gateway's /health", lambda: health_ok(ups.url), 60, proc, log)
    assert "gateway-0 (exit -9) died; restarted it" in log.read_text()

    everything = descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0, log.read_text()[-3000:]
    assert [cmd for pid, cmd in everything.items() if running(pid)] == []
    assert not health_ok(ups.url)
    assert "stopped." in log.read_text()


def test_a_killed_nats_is_started_again_on_its_port_and_the_services_reconnect(ups: BenchUps) -> None:
    proc, log = ups.start()
    stack = ups.ready(proc, log)
    nats, cmd = next((pid, cmd) for pid, cmd in stack.items() if "nats-server" in cmd.split()[0])
    url = next(line.split()[1] for line in log.read_text().splitlines() if line.startswith("nats: "))
    os.kill(nats, signal.SIGKILL)
    wait_until("nats-server again", lambda: f"nats-server (exit -9) died; restarted it on {url}"
               in log.read_text(), 30, proc, log)
    assert cmd in [c for pid, c in descendants(proc.pid).items() if pid != nats]  # same config: port, store
    # Every service's (two seaters), beside the zygote's own (what it forked logs to the service's).
    service_logs = sorted(path for path in (ups.home / "logs").glob("*.log") if path.stem != "zygote")
    assert len(service_logs) == len(SERVICES) + 1

    def all_reconnected() -> bool:
        return all("nats_reconnected" in path.read_text() for path in service_logs)

    wait_until("every service back on the bus", all_reconnected, 30, proc, log)
    assert health_ok(ups.url)
    assert "exited" not in log.read_text() and "died; restarted it (its log" not in log.read_text()


def test_a_killed_zygote_takes_its_services_along_and_every_one_is_started_again(ups: BenchUps) -> None:
    proc, log = ups.start()
    stack = ups.ready(proc, log)
    zygote = next(pid for pid, cmd in stack.items() if cmd.endswith("-m shared.zygote"))
    forked = {pid: service_of(cmd) for pid, cmd in stack.items() if psutil.Process(pid).ppid() == zygote}
    assert sorted(filter(None, forked.values())) == sorted([*SERVICES, "seater"])
    os.kill(zygote, signal.SIGKILL)

    def all_back() -> bool:
        now = descendants(proc.pid)
        return services_of(now) == sorted([*SERVICES, "seater"]) and not set(forked) & set(now)

    wait_until("every forked service started again", all_back, 60, proc, log)
    wait_until("the restarted gateway's /health", lambda: health_ok(ups.url), 60, proc, log)
    for name in ("ledger-0", "seater-0", "seater-1", "caller-0", "prober-0", "gateway-0"):
        assert f"{name} (exit -9) died; restarted it" in log.read_text()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0, log.read_text()[-3000:]


def test_without_forking_every_service_is_an_interpreter_of_its_own(ups: BenchUps) -> None:
    proc, log = ups.start(BENCH_FORK_SERVICES="false")
    stack = ups.ready(proc, log)
    assert services_of(stack) == sorted([*SERVICES, "seater"])
    assert not [cmd for cmd in stack.values() if "shared.zygote" in cmd]
    assert {psutil.Process(pid).ppid() for pid in stack} == {proc.pid}  # each the supervisor's own child
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0, log.read_text()[-3000:]


def test_kill_9_of_bench_up_leaves_no_process_and_the_next_starts_clean(ups: BenchUps) -> None:
    proc, log = ups.start()
    stack = ups.ready(proc, log)
    assert len(stack) == len(SERVICES) + 3  # NATS, the services, a second seater, the zygote
    assert [cmd for cmd in stack.values() if cmd.endswith("-m shared.zygote")] != []
    proc.kill()
    proc.wait(10)
    end = time.monotonic() + GONE_S
    while any(running(pid) for pid in stack) and time.monotonic() < end:
        time.sleep(0.05)
    assert [cmd for pid, cmd in stack.items() if running(pid)] == []
    assert not health_ok(ups.url)

    again, again_log = ups.start()
    ups.ready(again, again_log)
    again.send_signal(signal.SIGINT)
    assert again.wait(60) == 0, again_log.read_text()[-3000:]
    assert "Traceback" not in again_log.read_text()


def test_a_second_bench_up_names_the_running_one_and_bench_down_stops_it(ups: BenchUps) -> None:
    proc, log = ups.start()
    stack = ups.ready(proc, log)
    second = ups.run("up", BENCH_PORT=str(free_port()))
    assert second.returncode == 1
    assert second.stderr.splitlines() == [
        f"bench: bench up (pid {proc.pid}) is already running for {ups.home}; "
        f"`bench down` (or `kill {proc.pid}`) stops it"]
    assert descendants(proc.pid) == stack  # nothing started, nothing touched

    down = ups.run("down")
    assert down.returncode == 0, down.stderr
    assert proc.wait(10) == 0
    assert [cmd for pid, cmd in stack.items() if running(pid)] == []
    assert not (ups.home / "bench-up.pid").exists()
    nothing = ups.run("down")
    assert nothing.returncode == 1 and "no bench up is running" in nothing.stderr


@pytest.mark.parametrize(("extra", "says"), [
    ({"BENCH_SEATERS": "0"}, "bench: setting BENCH_SEATERS: Input should be greater than or equal to 1"),
    ({"BENCH_ACK_WAIT_S": "later"}, "bench: setting BENCH_ACK_WAIT_S: Input should be a valid number"),
])
def test_a_bad_setting_stops_bench_up_before_anything_starts(
    ups: BenchUps, extra: dict[str, str], says: str
) -> None:
    refused = ups.run("up", **extra)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[0].startswith(says) and len(refused.stderr.splitlines()) == 1
    assert not ups.home.exists()


def test_a_taken_port_stops_bench_up_before_anything_starts(ups: BenchUps) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", ups.port))
        taken.listen()
        refused = ups.run("up")
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        f"bench: BENCH_PORT {ups.port} is taken by another program; pick a free BENCH_PORT"]
    assert not (ups.home / "logs").exists() and not (ups.home / "nats").exists()


def test_an_external_nats_that_takes_no_connection_stops_bench_up_before_any_service(ups: BenchUps) -> None:
    nowhere = f"nats://127.0.0.1:{free_port()}"
    refused = ups.run("up", NATS_URL=nowhere)
    assert refused.returncode == 1
    failures = [line for line in refused.stderr.splitlines() if line.startswith("bench:")]
    assert failures == [f"bench: the stack failed: NATS_URL {nowhere}: nothing answers "
                        f"(127.0.0.1:{nowhere.rsplit(':', 1)[1]}: Connection refused)"]
    assert not list((ups.home / "logs").glob("*.log"))

"""Issue 9's fault test on one machine: 2 gateways, 2 seaters, 3 callers, NATS and the ledger under 32
concurrent panels.

Phase 1 kills: `kill -9` of one seater, one caller and NATS (each back after a pause, as an orchestrator
would bring it). Phase 2 rolls: SIGTERM of each gateway and each caller in turn, each started again once it
left. The client is a load balancer's view: a gateway that refuses the connection (it is down) is skipped
for the other one, a gateway rolling out leaves the endpoints before its SIGTERM (the manifests' preStop
pause), and a request a gateway took must be answered.

Figures: no client error in either phase; in phase 2 the provider got exactly one call per seat (a drained
caller finishes what it holds, so no paid call is made twice); no caller finished a call another had finished
(after NATS's kill it hands out again calls it had handed out; the callers look before paying); every seat
answered is in the ledger once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from shared.natsserver import free_port
from tests.e2e.conftest import ledger_caught_up, running, wait_until
from tests.fakes.provider import FakeProvider

MEMBERS = ["chaos-a", "chaos-b", "chaos-c"]
WORKERS = 32
LATENCY_MS = 300


class Load:
    """`WORKERS` clients asking panels in a loop until stopped, spread over the gateways."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = list(ports)  # the load balancer's endpoints: a gateway rolling out leaves them first
        self.stopping = threading.Event()
        self.errors: list[str] = []
        self.answered: list[dict[str, Any]] = []  # each 200's `bench`
        self.skipped = 0  # connections a gateway refused (down or draining): sent to the other one
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._worker, args=(i,), daemon=True) for i in range(WORKERS)]

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=180)

    def _worker(self, index: int) -> None:
        body = {"model": "bench/chaos", "messages": [{"role": "user", "content": f"worker {index}"}]}
        turn = index
        with httpx.Client(timeout=120) as client:
            while not self.stopping.is_set():
                turn += 1
                with self.lock:
                    port = self.ports[turn % len(self.ports)]
                try:
                    reply = client.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body)
                except httpx.ConnectError:
                    with self.lock:
                        self.skipped += 1
                    time.sleep(0.05)
                    continue
                except httpx.HTTPError as exc:
                    with self.lock:
                        self.errors.append(f"{port}: {type(exc).__name__}: {exc}")
                    continue
                with self.lock:
                    if reply.status_code == 200:
                        self.answered.append(reply.json()["bench"])
                    else:
                        self.errors.append(f"{port}: {reply.status_code} {reply.text[:300]}")


def seats_of(answered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [seat for bench in answered for seat in bench["seats"]]


def provider_calls(provider: FakeProvider) -> int:
    return sum(1 for r in provider.requests() if r["path"].endswith("/chat/completions"))


def finished_twice(logs: Path) -> dict[str, list[str]]:
    """The calls that more than one caller (or one caller twice) finished, from the callers' logs: each with
    the lines that say so, to tell a redelivery from a retry when the counts differ."""
    lines: dict[str, list[str]] = {}
    for path in sorted(logs.glob("caller-*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if '"call_finished"' in line or '"call_started"' in line or '"call_expired"' in line:
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    lines.setdefault(record.get("call", "?"), []).append(f"{path.stem}: {line}")
    return {call: said for call, said in lines.items()
            if sum('"call_finished"' in s for s in said) > 1}


def kill_and_revive(stack: Stack, service: str, index: int, pause_s: float) -> None:
    child = stack.find(service, index)
    assert child.proc is not None
    os.kill(child.proc.pid, signal.SIGKILL)
    child.proc.wait(10)
    time.sleep(pause_s)
    child.start()


def roll(stack: Stack, service: str, index: int, load: Load) -> None:
    """As a rollout does it: a gateway first leaves the load balancer (the preStop pause lets the endpoints
    go), then SIGTERM; it drains what it holds and leaves, and is started again."""
    child = stack.find(service, index)
    assert child.proc is not None
    port = int(child.env["BENCH_PORT"]) if service == "gateway" else None
    if port is not None:
        with load.lock:
            load.ports.remove(port)
        time.sleep(1)
    child.signal(signal.SIGTERM)
    # uvicorn re-raises the signal once it has shut down gracefully: the gateway's clean exit is -15.
    assert child.proc.wait(120) in (0, -signal.SIGTERM), f"{child.name} did not leave cleanly"
    child.start()
    if port is not None:
        wait_until(lambda: answers(port), timeout=60, what=f"{child.name} back")
        with load.lock:
            load.ports.append(port)


def answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def ledger_calls(admin: httpx.Client) -> Counter[str]:
    """How many seat rows the ledger holds for each call, read page by page."""
    held: Counter[str] = Counter()
    offset = 0
    while True:
        sql = f"SELECT call FROM seats ORDER BY call LIMIT 10000 OFFSET {offset}"
        reply = admin.post("/api/sql", json={"sql": sql, "max_rows": 10000})
        assert reply.status_code == 200, reply.text
        rows = reply.json()["rows"]
        held.update(row[0] for row in rows)
        if len(rows) < 10000:
            return held
        offset += len(rows)


def test_faults_and_rollouts_under_load_cost_the_clients_nothing(tmp_path: Path) -> None:
    provider = FakeProvider(models={m: {"latency_ms": LATENCY_MS} for m in MEMBERS}).start()
    stack = Stack(home=tmp_path / "home", port=free_port(),
                  replicas={"gateway": 2, "seater": 2, "caller": 3},
                  extra_env={"BENCH_DRAIN_S": "60", "BENCH_SEATER_PATIENCE_S": "20"})
    try:
        with running(stack), httpx.Client(base_url=stack.url, timeout=30) as admin:
            for path, body in (
                [("/api/endpoint", {"name": "fake", "base": provider.base_url})]
                + [("/api/models", {"served": m, "endpoint": "fake"}) for m in MEMBERS]
                + [("/api/collection", {"name": "chaos", "members": MEMBERS})]
            ):
                assert admin.post(path, json=body).status_code == 200, (path, body)
            ports = list(stack.gateway_ports)

            with Load(ports) as kills:  # phase 1
                time.sleep(3)
                kill_and_revive(stack, "seater", 0, pause_s=2)
                time.sleep(3)
                kill_and_revive(stack, "caller", 0, pause_s=2)
                time.sleep(3)
                assert stack.nats is not None and stack.nats.proc is not None
                os.kill(stack.nats.proc.pid, signal.SIGKILL)
                stack.nats.proc.wait(10)
                time.sleep(3)
                stack.nats.start()
                time.sleep(5)
            assert kills.errors == [], kills.errors[:5]
            assert len(kills.answered) > WORKERS

            wait_until(lambda: ledger_caught_up(stack), timeout=60, what="the ledger folding phase 1")
            provider.reset_requests()
            with Load(ports) as rolls:  # phase 2
                time.sleep(2)
                for service, index in (("gateway", 0), ("gateway", 1), ("caller", 0), ("caller", 1),
                                       ("caller", 2)):
                    roll(stack, service, index, rolls)
                    time.sleep(2)
            assert rolls.errors == [], rolls.errors[:5]
            seats = seats_of(rolls.answered)
            if len(seats) != provider_calls(provider):
                twice = finished_twice(stack.home / "logs")
                pytest.fail(f"{provider_calls(provider)} provider calls for {len(seats)} seats: a call was "
                            f"made twice; calls finished more than once: {twice}")

            wait_until(lambda: ledger_caught_up(stack), timeout=60, what="the ledger folding phase 2")
            answered = [s["call"] for s in seats_of(kills.answered) + seats if s["status"] == "ok"]
            held = ledger_calls(admin)
            assert set(answered) <= set(held) and set(held.values()) == {1}
            # A NATS killed mid-load hands out again calls it had handed out: callers look before paying.
            assert finished_twice(stack.home / "logs") == {}
            print(f"chaos: phase 1 {len(kills.answered)} panels answered, 0 errors, {kills.skipped} "
                  f"connections refused; phase 2 {len(rolls.answered)} panels, {len(seats)} seats = "
                  f"{provider_calls(provider)} provider calls, 0 errors")
    finally:
        provider.stop()

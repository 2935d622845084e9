"""Onboarding across replicas (issue 20): two gateways and two probers on one stack. Batches queued through
both gateways at once (one of them clashing with the other on a served id) are taken whole or refused whole;
the prober running a step is killed by PID and the other takes the model over; the models still run one at
a time (each model's probe calls reach the provider in one block, each call once) and none vanishes."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from shared.natsserver import free_port
from tests.e2e.conftest import Admin, running, wait_until
from tests.fakes.provider import FakeProvider

MODELS = ("rep-a", "rep-b", "rep-c", "rep-d")


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, FakeProvider]]:
    provider = FakeProvider(log_path=tmp_path_factory.mktemp("fake") / "provider.log").start()
    home: Path = tmp_path_factory.mktemp("stack")
    stack = Stack(home=home, port=free_port(), replicas={"gateway": 2, "prober": 2, "seater": 1},
                  extra_env={"BENCHWARMERS_KEY_FAKE": "sk-test-replicas", "BENCH_ONBOARD_LEASE_S": "3",
                             "BENCH_ONBOARD_TICK_S": "0.2"})
    try:
        with running(stack):
            Admin(stack.url).endpoint("fake", provider.base_url)
            yield stack, provider
    finally:
        provider.stop()


def queue(port: int, served: list[str]) -> httpx.Response:
    items = [{"served": s, "endpoint": "fake", "mode": "quick"} for s in served]
    return httpx.post(f"http://127.0.0.1:{port}/api/onboard-queue", json={"items": items}, timeout=120)


def view(stack: Stack) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{stack.url}/api/onboard-queue", timeout=30).json()
    return found


def chat_models(provider: FakeProvider) -> list[str]:
    return [r["model"] for r in provider.requests() if r["path"].endswith("/chat/completions")]


def test_two_gateways_and_two_probers_run_one_model_at_a_time_through_a_killed_prober(
    pair: tuple[Stack, FakeProvider],
) -> None:
    stack, provider = pair
    for name in MODELS:
        provider.set_model(name, latency_ms=600)
    provider.reset_requests()
    one, two = stack.gateway_ports
    with ThreadPoolExecutor(3) as pool:
        asked = [pool.submit(queue, one, ["rep-a", "rep-b"]), pool.submit(queue, two, ["rep-c", "rep-d"]),
                 pool.submit(queue, two, ["rep-b", "rep-x"])]
        replies = [f.result() for f in asked]
    assert [r.status_code for r in replies[:2]] == [200, 200], [r.text for r in replies]
    assert replies[2].status_code in (404, 409) and "fake does not list 'rep-x'" in replies[2].text

    wait_until(lambda: bool(chat_models(provider)), 30, "the first probe call")
    runner = view(stack)["runner"]
    victim = next(c for c in stack.children
                  if c.service == "prober" and c.proc is not None and runner.endswith(f"-{c.proc.pid}"))
    taken = next(i for i in view(stack)["items"] if i["state"] == "running")
    victim.signal(signal.SIGKILL)

    def finished() -> bool:
        return all(i["state"] not in ("queued", "running") for i in view(stack)["items"])

    wait_until(finished, 120, "the whole queue")
    items = view(stack)["items"]
    assert sorted(i["served"] for i in items) == sorted(MODELS)
    assert [i["state"] for i in items] == ["done"] * 4, items
    assert next(i for i in items if i["id"] == taken["id"])["attempts"] == 2
    seen = chat_models(provider)
    blocks = [m for n, m in enumerate(seen) if n == 0 or seen[n - 1] != m]
    assert sorted(blocks) == sorted(MODELS), seen
    assert all(seen.count(m) == 4 for m in MODELS), seen
    registered = {m["served"] for m in Admin(stack.url).http.get("/api/models").json()["models"]}
    assert set(MODELS) <= registered

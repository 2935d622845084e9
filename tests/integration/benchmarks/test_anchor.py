"""The anchor (`benchmarks/anchor.py`) is a fair comparison only if it is set up as its users set it up and
answers what `make bench` asks of it: a streamed route turn by one member, a panel of every member and two
explorers; and it leaves nothing running."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import psutil
import pytest

from benchmarks.anchor import NAME, PYTHON, anchor_path, installed
from benchmarks.panel import EXPLORERS, MEMBERS
from tests.integration.benchmarks.streams import streamed_text

pytestmark = pytest.mark.skipif(not installed(), reason=f"{NAME} is not in {PYTHON} (make test installs it)")


@pytest.fixture(scope="module")
def provider_base() -> Iterator[str]:
    from tests.fakes.provider import FakeProvider

    fake = FakeProvider(models={m: {"latency_ms": 0, "answer": f"{m} says hi"} for m in MEMBERS + EXPLORERS})
    fake.start()
    try:
        yield fake.base_url
    finally:
        fake.stop()


def test_the_anchor_answers_route_turns_and_panels_then_stops(provider_base: str) -> None:
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with anchor_path(provider_base, MEMBERS, EXPLORERS) as url:
        running = {p.pid for p in psutil.Process().children(recursive=True)} - before
        route = httpx.post(url + "/v1/chat/completions", timeout=30, json={
            "model": "bench/core:route", "stream": True, "messages": [{"role": "user", "content": "hello"}]})
        panel = httpx.post(url + "/v1/chat/completions", timeout=30, json={
            "model": "bench/core", "messages": [{"role": "user", "content": "hello"}]})
    assert route.status_code == 200, route.text
    assert streamed_text(route.text) in {f"{m} says hi" for m in MEMBERS}
    assert panel.status_code == 200, panel.text
    seats = panel.json()["bench"]["seats"]
    assert [s["status"] for s in seats] == ["ok"] * 5
    assert [s["alias"] for s in seats[:3]] == MEMBERS
    assert {s["alias"] for s in seats[3:]} <= set(EXPLORERS)
    assert sorted(s["answer"] for s in seats) == sorted(f"{s['alias']} says hi" for s in seats)
    assert running  # the gateway, while it served
    assert not {p.pid for p in psutil.Process().children(recursive=True)} - before


def test_an_anchor_that_cannot_be_set_up_is_reported_not_raised() -> None:
    """`make bench` keeps every figure it measured before the anchor, and says why the anchor is missing."""
    from benchmarks.panel import beside_anchor
    from shared.natsserver import free_port

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    nobody = f"http://127.0.0.1:{free_port()}/v1/chat/completions"
    reported = beside_anchor(nobody, 2, 1.0)
    assert reported is not None and "could not list" in reported["error"]
    assert not {p.pid for p in psutil.Process().children(recursive=True)} - before

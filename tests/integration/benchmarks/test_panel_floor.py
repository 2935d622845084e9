"""A panel's floor (`benchmarks/panel_floor.py`) is a yardstick only if every variant asks every seat, brings
each whole streamed reply back, and leaves nothing running."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import psutil
import pytest

from benchmarks.panel_floor import SEAT_MODELS, VARIANTS, panel_floor_path
from tests.fakes.provider import FakeProvider
from tests.integration.benchmarks.streams import streamed_text


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    fake = FakeProvider(models={m: {"latency_ms": 0, "answer": f"{m} says hi"} for m in SEAT_MODELS}).start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_asks_every_seat_and_stops_its_processes(provider: FakeProvider, variant: str) -> None:
    design = VARIANTS[variant]
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with panel_floor_path(provider.base_url + "/chat/completions", design) as url:
        started = {p.pid for p in psutil.Process().children(recursive=True)} - before
        replies = [httpx.post(url, json={"model": "bench/core"}, timeout=10) for _ in range(2)]
    for reply in replies:
        assert reply.status_code == 200
        assert sorted(streamed_text(answer) for answer in reply.json()) == sorted(
            f"{m} says hi" for m in SEAT_MODELS)
    # nats-server, two callers and the gateway, and the seater when the panel is planned
    assert len(started) == 4 + design.plan
    assert not {p.pid for p in psutil.Process().children(recursive=True)} & started

"""Route mode's floor (`benchmarks/floor.py`) is a yardstick only if it relays what the provider streams,
whole and in order, and leaves nothing running."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import psutil
import pytest

from benchmarks.floor import floor_path
from tests.fakes.provider import FakeProvider

MODEL = "floor-m"


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    fake = FakeProvider(models={MODEL: {"latency_ms": 0, "answer": "one two three four"}}).start()
    try:
        yield fake
    finally:
        fake.stop()


def data_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("data:")]


def test_the_floor_relays_the_providers_stream_whole_and_stops_its_processes(provider: FakeProvider) -> None:
    url = provider.base_url + "/chat/completions"
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "x"}]}
    direct = httpx.post(url, json=body, timeout=10)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with floor_path(url) as floor_url:
        started = {p.pid for p in psutil.Process().children(recursive=True)} - before
        relayed = httpx.post(floor_url, json=body, timeout=10)
    assert relayed.status_code == 200 and relayed.headers["content-type"] == "text/event-stream"
    lines = data_lines(relayed.text)
    # ids and timestamps differ between two replies; the pieces and their order may not
    shape = [json.loads(line[5:]) if line != "data: [DONE]" else "DONE" for line in lines]
    assert len(lines) == len(data_lines(direct.text)) > 2 and shape[-1] == "DONE"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in shape[:-1] if c["choices"])
    assert text == "one two three four"
    assert len(started) == 3  # nats-server, the floor's caller and gateway
    assert not {p.pid for p in psutil.Process().children(recursive=True)} & started

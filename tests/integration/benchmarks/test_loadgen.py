"""The load client's fan-out mode: each request is N copies sent at once, timed until the last one ends, so
`make bench` can set a panel against its fan-out on the provider alone."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.fakes.provider import FakeProvider

MODEL = "fan-m"


def test_a_fanned_request_sends_every_copy_at_once_and_waits_for_the_last() -> None:
    provider = FakeProvider(models={MODEL: {"latency_ms": 1000}}).start()
    try:
        body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "x"}]})
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.loadgen", provider.base_url + "/chat/completions",
             "--body", body, "--requests", "2", "--seconds", "60", "--fanout", "4"],
            check=True, capture_output=True, text=True, timeout=60,
        )
        result = json.loads(out.stdout)
        assert result["errors"] == [] and len(result["latencies"]) == 2
        assert len(provider.requests()) == 8
        # Four at once take about one latency (1 s); one after the other they would take four.
        assert all(1.0 <= latency < 2.5 for latency in result["latencies"])
    finally:
        provider.stop()


def test_a_marker_does_not_go_with_a_fan_out() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.loadgen", "http://127.0.0.1:9/x", "--body", "{}", "--fanout", "2",
         "--marker", "data:"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2 and "does not go with --fanout" in done.stderr

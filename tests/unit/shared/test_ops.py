"""The ops port's answers (pure): alive, ready or each problem named, Prometheus text, and nothing else."""

from __future__ import annotations

import json

from shared import metrics
from shared.ops import Readiness, answer


def parts(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, body = raw.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def test_alive_and_ready() -> None:
    ready = Readiness()
    ready.add("bus", lambda: None)
    assert parts(answer("GET", "/healthz", ready))[0] == 200
    status, _, body = parts(answer("GET", "/readyz", ready))
    assert status == 200 and json.loads(body) == {"ready": True, "problems": []}


def test_not_ready_names_every_problem_and_a_failing_check_is_one() -> None:
    ready = Readiness()
    ready.add("bus", lambda: "not connected to NATS")
    ready.add("fold", lambda: None)
    ready.add("streams", lambda: 1 / 0 and None)
    status, headers, body = parts(answer("GET", "/readyz", ready))
    assert status == 503 and headers["Content-Length"] == str(len(body))
    assert json.loads(body)["problems"] == ["bus: not connected to NATS", "streams: the check failed "
                                            "(ZeroDivisionError)"]


def test_metrics_are_prometheus_text() -> None:
    metrics.SEATS.labels("ok").inc()
    status, headers, body = parts(answer("GET", "/metrics", Readiness()))
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert b'bench_seats_total{status="ok"}' in body


def test_other_paths_and_methods_are_refused() -> None:
    assert parts(answer("GET", "/admin", Readiness()))[0] == 404
    status, headers, _ = parts(answer("POST", "/readyz", Readiness()))
    assert status == 405 and headers["Allow"] == "GET, HEAD"

"""`bench onboard …`, `bench candidates`, `bench dismiss` against an in-process server: the bodies sent, the
mode rule (O-2), and `--wait` drawing the queue's progress events until the batch is over."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
from typer.testing import Result

from tests.unit.cli.conftest import FakeServer

Bench = Callable[..., Result]
ITEM = {"id": "o1", "served": "org/m-a", "endpoint": "fake", "mode": "quick", "state": "queued", "step": 0,
        "alias": "", "note": "", "attempts": 0, "queued_at": "2026-12-03T12:00:00Z", "ended_at": None}
QUEUE = {"ok": True, "running": False, "stopping": False, "runner": "", "items": [ITEM], "issues": [],
         "candidates": [], "dismissed": [], "errors": []}


def progress(state: str, step: int, note: str = "", remaining: int = 1) -> dict[str, Any]:
    return {"type": "onboard_progress", "id": f"onboard:o1:{state}:{step}:1", "item": "o1",
            "served": "org/m-a", "endpoint": "fake", "mode": "quick", "state": state, "step": step,
            "note": note, "alias": "m-a", "instance": "prober-x-1", "attempt": 1, "remaining": remaining}


def events(*moves: dict[str, Any]) -> str:
    text = f"event: queue\ndata: {json.dumps(QUEUE)}\n\n"
    return text + "".join(f"event: progress\ndata: {json.dumps(m)}\n\n" for m in moves)


def test_onboard_queues_the_batch_in_its_mode(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/onboard-queue", body=QUEUE)
    result = bench("onboard", "org/m-a", "org/m-b", "--endpoint", "fake", "--quick", "--ad-hoc",
                   env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert server.body() == {"items": [{"served": "org/m-a", "endpoint": "fake", "mode": "quick-adhoc"},
                                       {"served": "org/m-b", "endpoint": "fake", "mode": "quick-adhoc"}]}
    assert "org/m-a" in result.stdout


def test_ad_hoc_without_quick_and_no_endpoint_are_usage_errors(bench: Bench, server: FakeServer) -> None:
    assert bench("onboard", "org/m-a", "--endpoint", "fake", "--ad-hoc").exit_code == 2
    assert bench("onboard", "org/m-a").exit_code == 2
    assert server.seen == []


def test_status_stop_and_clear_go_to_their_routes(bench: Bench, server: FakeServer) -> None:
    for method, path in (("GET", "/api/onboard-queue"), ("POST", "/api/onboard-queue/stop"),
                         ("POST", "/api/onboard-queue/clear")):
        server.answer(method, path, body=QUEUE)
    for action in ("status", "stop", "clear"):
        assert bench("onboard", action).exit_code == 0
    assert [(r.method, r.url.path) for r in server.seen] == [("GET", "/api/onboard-queue"),
                                                             ("POST", "/api/onboard-queue/stop"),
                                                             ("POST", "/api/onboard-queue/clear")]


def test_wait_draws_the_progress_and_fails_when_a_model_did_not_answer(
    bench: Bench, server: FakeServer
) -> None:
    server.answer("POST", "/api/onboard-queue", body=QUEUE)
    stream = events(progress("running", 1), progress("running", 4),
                    progress("no answer", 4, "onboard stopped: none of its 4 probe calls answered", 0))
    server.routes[("GET", "/api/onboard-queue/events")] = httpx.Response(
        200, text=stream, headers={"content-type": "text/event-stream"})
    result = bench("onboard", "org/m-a", "--endpoint", "fake", "--quick", "--wait", env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "org/m-a: no answer (onboard stopped: none of its 4 probe calls answered)" in result.stderr
    assert "bench: org/m-a: no answer: onboard stopped" in result.stderr


def test_candidates_new_and_dismiss(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/candidates", body={**QUEUE, "candidates": [
        {"served": "org/old", "endpoint": "fake", "key": "org/old", "new": False},
        {"served": "org/new", "endpoint": "fake", "key": "org/new", "new": True}],
        "errors": ["other: 502"]})
    result = bench("candidates", "--new", env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "org/new" in result.stdout and "org/old" not in result.stdout
    assert "other: 502" in result.stderr
    server.answer("POST", "/api/dismiss", body=QUEUE)
    assert bench("dismiss", "org/old", "x@other", "--undo").exit_code == 0
    assert server.body() == {"served": ["org/old", "x@other"], "undo": True}

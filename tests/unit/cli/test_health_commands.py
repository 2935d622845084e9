"""`bench settings scheduler`, `bench model retry` and the status column of `bench models` (HL-6, HL-7):
arguments → request, reply → table."""

from __future__ import annotations

from collections.abc import Callable

from typer.testing import Result

from tests.unit.cli.conftest import FakeServer
from tests.unit.cli.test_ledger_views import WIDE, rows_of

Bench = Callable[..., Result]
SCHEDULER = {"ok": True, "scheduler": {"mode": "run", "source": "config", "since": "2026-12-03T10:00:00Z",
                                       "jobs": {"availability": True, "perf": False}}}


def test_scheduler_sends_the_mode_and_each_job_switched(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/scheduler", body=SCHEDULER)
    result = bench("settings", "scheduler", "run", "--off", "perf,suite", "--off", "catalog", "--on",
                   "availability", env=WIDE)
    assert result.exit_code == 0, result.output
    assert server.body() == {"mode": "run", "off": ["perf", "suite", "catalog"], "on": ["availability"]}
    assert "perf" in result.stdout and "off" in result.stdout


def test_scheduler_without_arguments_shows_the_settings(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/scheduler", body=SCHEDULER)
    result = bench("settings", "scheduler", env=WIDE)
    assert result.exit_code == 0, result.output
    assert server.seen[-1].method == "GET" and "config" in result.stdout


def test_retry_asks_for_one_probe_call(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/retry", body={"ok": True, "alias": "mini", "answered": True, "status": "ok",
                                              "failure": None, "seconds": 0.4, "error": "", "cleared": True})
    result = bench("model", "retry", "mini", env=WIDE)
    assert result.exit_code == 0, result.output
    assert server.body() == {"alias": "mini"} and "cleared" in result.stdout


def test_models_show_the_status_and_the_latest_probe(bench: Bench, server: FakeServer) -> None:
    models = [
        {"alias": "ok-one", "served": "v/ok", "role": "general", "status": "healthy", "endpoint": "e",
         "connection": "e", "ad_hoc": False, "why": "answered",
         "last_probe": {"at": "2026-12-03T05:00:04Z", "answered": True, "failure": None}},
        {"alias": "dying", "served": "v/d", "role": "general", "status": "retiring", "endpoint": "e",
         "connection": "e", "ad_hoc": False, "why": "dying retires in 2 days unless it answers",
         "last_probe": {"at": "2026-12-03T05:00:09Z", "answered": False, "failure": "structural"}},
    ]
    server.answer("GET", "/api/models", body={"ok": True, "models": models, "renamed": {}})
    result = bench("models", env=WIDE)
    assert result.exit_code == 0, result.output
    rows = rows_of(result.stdout, "models")
    assert [(r[0], r[3], r[4]) for r in rows] == [
        ("ok-one", "healthy", "2026-12-03T05:00 ok"), ("dying", "retiring", "2026-12-03T05:00 structural")]

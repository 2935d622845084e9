"""The bench's health on a whole stack (HL-6, HL-7, C-16): a model on a `retiring` alert shows it in its
status, `bench model retry` asks it one probe call through the callers and an answer clears the alert;
the scheduler's settings are a config event set through the API and the CLI, a bad mode or job refused
with the valid ones listed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from tests.e2e.conftest import wait_until
from tests.e2e.test_cli import bench
from tests.fakes.provider import FakeProvider

SERVED = "hl-retry"
# The `bench` script runs this checkout's CLI (not whichever one the virtualenv was installed from).
HERE = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def ok(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    assert data["ok"] is True
    return data


def refused(reply: httpx.Response, status: int = 400) -> str:
    assert reply.status_code == status, reply.text
    return " | ".join(reply.json()["errors"])


@pytest.fixture(scope="module")
def http(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=120) as client:
        yield client


def model(http: httpx.Client, alias: str) -> dict[str, Any]:
    return next(m for m in ok(http.get("/api/models"))["models"] if m["alias"] == alias)


def test_a_retry_that_answers_clears_the_retiring_alert_and_the_status_follows(
    http: httpx.Client, stack: Stack, provider: FakeProvider
) -> None:
    provider.set_model(SERVED)
    alias = ok(http.post("/api/models", json={"served": SERVED, "endpoint": "fake", "ad_hoc": True}))
    alias = alias["model"]["alias"]
    assert model(http, alias)["status"] == "untested"
    key = f"model:pending:{SERVED}"
    ok(http.post("/api/alerts", json={"key": key, "message": f"{alias} retires in 2 days unless it answers"}))
    shown = model(http, alias)
    assert (shown["status"], shown["why"]) == ("retiring", f"{alias} retires in 2 days unless it answers")

    done = bench("--json", "model", "retry", alias, url=stack.url, env=HERE)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["answered"], answer["status"], answer["cleared"]) == (True, "ok", True)
    assert key not in {a["key"] for a in ok(http.get("/api/alerts"))["alerts"]}
    wait_until(lambda: model(http, alias)["status"] == "healthy", what="the probe reaching the ledger")
    assert model(http, alias)["last_probe"]["answered"] is True

    provider.set_model(SERVED, behaviour="not_found")
    failed = ok(http.post("/api/retry", json={"alias": alias}))
    assert (failed["answered"], failed["failure"], failed["cleared"]) == (False, "structural", False)
    assert "no model with alias 'nobody'" in refused(http.post("/api/retry", json={"alias": "nobody"}), 404)


def test_scheduler_settings_are_stored_and_bad_ones_refused_with_the_valid_ones(
    http: httpx.Client, stack: Stack
) -> None:
    try:
        done = bench("--json", "settings", "scheduler", "log-only", "--off", "perf,suite", url=stack.url,
                     env=HERE)
        assert done.returncode == 0, done.stderr
        shown = ok(http.get("/api/scheduler"))["scheduler"]
        assert (shown["mode"], shown["source"]) == ("log-only", "config")
        assert (shown["jobs"]["perf"], shown["jobs"]["suite"], shown["jobs"]["availability"]) == (
            False, False, True)
        status = ok(http.get("/api/status"))
        assert (status["scheduler"], status["scheduler_jobs"]["perf"]) == ("log-only", False)
        why = refused(http.post("/api/scheduler", json={"mode": "hourly", "off": ["perfs"]}))
        assert "off, log-only, run" in why and "availability, catalog, suite-free" in why
        cli = bench("settings", "scheduler", "sometimes", url=stack.url, env=HERE)
        assert cli.returncode != 0 and "off, log-only, run" in cli.stdout + cli.stderr
    finally:
        ok(http.post("/api/scheduler", json={"mode": "off", "on": ["perf", "suite"]}))

"""`bench model facts|set`, `bench catalog status|refresh`, `bench discover`: arguments → request, reply →
output (C-15, CAT-1, CAT-4)."""

from __future__ import annotations

from collections.abc import Callable

from typer.testing import Result

from tests.unit.cli.conftest import FakeServer

Bench = Callable[..., Result]
WIDE = {"COLUMNS": "300"}
FACTS = {"ok": True, "alias": "fast", "served": "vendor/fast", "endpoint": "fake", "catalog_refreshed": None,
         "facts": [{"fact": "context_window", "value": 32000, "source": "models.dev"},
                   {"fact": "tools", "value": True, "source": "you"},
                   {"fact": "vision", "value": None, "source": None}]}
FEED = {"feed": "models.dev", "source": "feed", "models": 10, "age_s": 7200.0,
        "tried": "2026-12-03T06:00:00Z", "fetched": "2026-12-03T06:00:00Z", "error": ""}


def test_facts_shows_each_fact_with_its_source(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/model/facts", body=FACTS)
    result = bench("model", "facts", "fast", env=WIDE)
    assert result.exit_code == 0, result.output
    assert server.seen[0].url.params["alias"] == "fast"
    assert "models.dev" in result.stdout and "unknown" in result.stdout


def test_set_sends_only_what_was_given(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/model/facts", body=FACTS)
    result = bench("model", "set", "fast", "--context-window", "32000", "--tools", "--no-vision",
                   "--cost-in", "0", "--cost-out", "0.5", "--clear", "reasoning")
    assert result.exit_code == 0, result.output
    assert server.body() == {"alias": "fast", "context_window": 32000, "tools": True, "vision": False,
                             "cost": {"input": 0.0, "output": 0.5}, "clear": ["reasoning"]}


def test_set_refuses_half_a_price_an_unknown_fact_or_nothing(bench: Bench, server: FakeServer) -> None:
    assert "--cost-in and --cost-out together" in bench("model", "set", "fast", "--cost-in", "1").stderr
    assert "--clear takes one of" in bench("model", "set", "fast", "--clear", "colour").stderr
    assert "nothing to set" in bench("model", "set", "fast").stderr
    assert server.seen == []


def test_catalog_status_and_refresh(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/catalog", body={"ok": True, "feeds": [FEED], "refreshed": None})
    status = bench("catalog", "status", env=WIDE)
    assert status.exit_code == 0 and "2.0 h" in status.stdout
    assert "last changed by a refresh: never" in status.stderr
    failed = {**FEED, "error": "answered HTTP 503"}
    server.answer("POST", "/api/catalog/refresh", body={"ok": True, "feeds": [failed], "changed": ["fast"],
                                                        "raised": ["model:paid:vendor/fast"], "cleared": []})
    result = bench("catalog", "refresh", "--if-due", env=WIDE)
    assert result.exit_code == 0, result.output
    assert server.body() == {"force": False}
    assert "answered HTTP 503" in result.stdout and "went paid: model:paid:vendor/fast" in result.stderr


def test_discover_passes_its_filters(bench: Bench, server: FakeServer) -> None:
    row = {"provider": "groq", "model": "llama-x", "free": True, "new": True, "reach": "connected",
           "endpoints": ["groq"], "also_on": [], "cost": {"input": 0, "output": 0}, "feeds": ["freellmapi"]}
    server.answer("GET", "/api/discover", body={"ok": True, "rows": [row], "baseline": "2026-12-01"})
    result = bench("discover", "--free", "--new", env=WIDE)
    assert result.exit_code == 0, result.output
    assert dict(server.seen[0].url.params) == {"free": "true", "new": "true"}
    assert "llama-x" in result.stdout and "$0/$0" in result.stdout

"""What the dashboard's pages show, from the admin API's rows and the ledger's (SPEC H-D4, P-17, L-7)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from services.console.dashboard.views import (
    Filters,
    action_needed,
    first_run,
    glance_rows,
    info_rows,
    owed_seats,
    panels,
    price_of,
    probe_text,
    quota_burn,
    secret_state,
    usage_plots,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def model(alias: str, **extra: Any) -> dict[str, Any]:
    return {"alias": alias, "served": alias, "connection": "fake", "role": "general", "status": "healthy",
            "retired": False, "tools": False, "vision": False, "last_probe": None, **extra}


def test_glance_rows_carry_verdicts_suite_and_capabilities_and_the_filters_narrow_them() -> None:
    rows = [model("b", tools=True, vision=True), model("a", status="cooling", role="code"),
            model("old", retired=True, status="retired")]
    shown = glance_rows(rows, {"b": (3, 4)}, {"b": (5, 6)}, Filters())
    assert [r["alias"] for r in shown] == ["a", "b"]  # retired hidden unless asked
    assert (shown[1]["useful"], shown[1]["judged"], shown[1]["found"], shown[1]["of"]) == (3, 4, 5, 6)
    assert shown[1]["capabilities"] == "tools, vision" and shown[0]["capabilities"] == "text only"
    assert [r["alias"] for r in glance_rows(rows, {}, {}, Filters.of({"status": "cooling"}))] == ["a"]
    assert [r["alias"] for r in glance_rows(rows, {}, {}, Filters.of({"role": "general", "retired": "1"}))] \
        == ["b", "old"]


def test_action_needed_offers_retry_and_retire_on_a_models_alert_and_restore_after_a_retirement() -> None:
    alerts = [{"key": "model:pending:a", "message": "a stopped answering", "action": "retry it",
               "alias": "a"},
              {"key": "connection:held:x", "message": "x is held", "action": "", "alias": None}]
    models = [model("a"), model("gone", retired=True, retired_at=NOW - timedelta(days=2), retired_why="dead"),
              model("ancient", retired=True, retired_at=NOW - timedelta(days=30))]
    actions = action_needed(alerts, models, NOW)
    assert [(a.key, a.buttons) for a in actions] == [
        ("model:pending:a", ("retry", "retire")), ("connection:held:x", ()), ("retired:gone", ("restore",))]


def test_the_last_probe_reads_as_when_and_how() -> None:
    assert probe_text(None) == "never"
    assert probe_text({"at": "2026-03-01T11:58:30Z", "answered": True}) == "2026-03-01 11:58 answered"
    failed = probe_text({"at": NOW, "answered": False, "failure": "timeout"})
    assert failed == "2026-03-01 12:00 failed: timeout"


def test_the_first_run_guide_follows_what_exists() -> None:
    assert [s.done for s in first_run(1, 0, 0, 0)] == [True, False, False, False]
    assert all(s.done for s in first_run(1, 2, 1, 1))


def test_recent_panels_group_their_seats_and_owed_is_what_the_ledger_still_waits_for() -> None:
    rows = [["p2", NOW, "core", "p2.member1", "member", "a", "ok", 1.5],
            ["p2", NOW, "core", "p2.member2", "member", "b", "error", 0.2],
            ["p1", NOW, "core", "p1.member1", "member", "a", "ok", 2.0],
            ["p0", NOW, "core", None, None, None, None, None]]  # seated, no seat done yet
    recent = panels(rows, ["p2.member1"])
    assert [(p.panel, len(p.seats)) for p in recent] == [("p2", 2), ("p1", 1), ("p0", 0)]
    assert [(p.panel, s.call) for p, s in owed_seats(recent)] == [("p2", "p2.member1")]


def test_usage_plots_have_one_mark_per_call() -> None:
    rows = [{"alias": "a", "t": NOW, "tokens_in": 10, "tokens_out": 5, "seconds": 1.0},
            {"alias": "a", "t": NOW + timedelta(seconds=1), "tokens_in": 1, "tokens_out": 1, "seconds": 3.0},
            {"alias": "b", "t": NOW, "tokens_in": 0, "tokens_out": 0, "seconds": 0.5}]
    calls, tokens, latency = usage_plots(rows)
    assert calls.count == tokens.count == latency.count == 3
    assert [m.label.split(": ")[1] for m in tokens.series[0].marks] == ["15 tokens", "17 tokens"]


def test_quota_burn_says_how_much_is_used() -> None:
    quota = {"quotas": [{"connection": "c", "alias": "", "metric": "requests", "window": "day", "left": 25,
                         "of": 100, "resets": None, "source": "headers"},
                        {"connection": "c", "alias": "m", "metric": "tokens", "window": "minute",
                         "left": None, "of": None, "resets": "2026-03-01T12:01:00+00:00",
                         "source": "stated"}]}
    first, second = quota_burn(quota)
    assert (first.used_percent, second.used_percent, second.resets) == (75, None, "2026-03-01T12:01")


def test_a_secret_is_only_ever_set_or_not_set() -> None:
    assert [secret_state(v) for v in (True, False, None)] == ["set", "not set", "unknown"]


def test_info_says_what_this_gateway_is_and_what_the_bench_holds() -> None:
    status = {"version": "1.2.3", "gateway": "http://127.0.0.1:8122/v1", "data": "/d", "models": 3,
              "decision_models": 1, "retired": 2, "collections": 4, "endpoints": 2,
              "default_endpoint": "fake",
              "scheduler": "run", "scheduler_jobs": {"probe": True, "suite": False}, "auth": True,
              "keys_required": False, "onboarding": {"running": True, "items": 2}}
    rows = dict(info_rows(status, "CPython 3.11.2"))
    assert rows["Python"] == "CPython 3.11.2" and rows["Endpoints"] == "2 (default: fake)"
    assert rows["Scheduler"] == "run; jobs on: probe"
    assert rows["Onboarding"] == "running, 2 in the batch"
    assert rows["Admin login"] == "required (a token is set)" and rows["Gateway keys"] == "not required"


def test_the_price_filter_reads_the_models_cost_fact() -> None:
    assert price_of(None, "vendor/m:free") == "free"
    assert price_of({"input": 0.0, "output": 0.0}, "m") == "free"
    assert price_of({"input": 0.0, "output": 0.4}, "m") == "paid"
    assert price_of(None, "m") == "unknown"
    rows = [model("f", price="free"), model("p", price="paid"), model("u", price="unknown")]
    assert [r["alias"] for r in glance_rows(rows, {}, {}, Filters.of({"price": "paid"}))] == ["p"]
    assert [r["alias"] for r in glance_rows(rows, {}, {}, Filters.of({}))] == ["f", "p", "u"]

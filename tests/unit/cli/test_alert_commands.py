"""`bench alerts`, `bench alert raise|clear|allow-paid`: arguments → request, reply → output (C-16, U-5)."""

from __future__ import annotations

from collections.abc import Callable

from typer.testing import Result

from tests.unit.cli.conftest import FakeServer

Bench = Callable[..., Result]
KEY = "model:paid:vendor/fast:free"
WIDE = {"COLUMNS": "300"}  # Rich fits tables to the terminal: wide enough that no cell wraps
ALERT = {"key": KEY, "kind": "went paid", "message": "listed with a price now", "action": "retire it",
         "alias": "fast", "aliases": [], "by": "admin", "first_seen": "2026-03-01T06:00:00Z",
         "last_seen": "2026-03-01T08:00:00Z"}


def test_alerts_lists_them_or_says_there_are_none(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/alerts", body={"ok": True, "alerts": [ALERT]})
    result = bench("alerts", env=WIDE)
    assert result.exit_code == 0, result.output
    assert "model:paid:vendor/fast:free" in result.stdout and "went paid" in result.stdout
    server.answer("GET", "/api/alerts", body={"ok": True, "alerts": []})
    assert "no alerts" in bench("alerts").stderr


def test_raise_sends_only_what_was_given(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/alerts", body={"ok": True, "alert": ALERT})
    result = bench("alert", "raise", KEY, "--message", "listed with a price now", "--alias", "fast",
                   "--aliases", "fast,slow")
    assert result.exit_code == 0, result.output
    assert server.body() == {"key": KEY, "message": "listed with a price now", "alias": "fast",
                             "aliases": ["fast", "slow"]}


def test_a_refused_raise_prints_the_servers_reasons_and_exits_1(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/alerts", 400, body={"ok": False, "errors": ["unknown kind 'pricey'"]})
    result = bench("alert", "raise", KEY, "--message", "m", "--kind", "pricey")
    assert result.exit_code == 1
    assert "bench: unknown kind 'pricey'" in result.stderr
    assert server.body()["kind"] == "pricey"


def test_clear_deletes_the_key_in_the_path(bench: Bench, server: FakeServer) -> None:
    server.answer("DELETE", f"/api/alerts/{KEY}", body={"ok": True, "cleared": KEY})
    result = bench("alert", "clear", KEY)
    assert result.exit_code == 0, result.output
    assert server.seen[0].method == "DELETE" and server.seen[0].url.path == f"/api/alerts/{KEY}"
    assert f"cleared {KEY}" in result.stderr


def test_allow_paid_shows_replaces_or_empties_the_list(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/allow-paid", body={"ok": True, "allow_paid": []})
    server.answer("POST", "/api/allow-paid", body={"ok": True, "allow_paid": ["fast", "vendor/x"]})
    assert "allowed when priced: none" in bench("alert", "allow-paid").stderr
    assert "allowed when priced: fast, vendor/x" in bench("alert", "allow-paid", "fast", "vendor/x").stderr
    assert server.body() == {"allow_paid": ["fast", "vendor/x"]}
    assert bench("alert", "allow-paid", "--none").exit_code == 0
    assert server.body() == {"allow_paid": []}
    assert bench("alert", "allow-paid", "fast", "--none").exit_code == 2

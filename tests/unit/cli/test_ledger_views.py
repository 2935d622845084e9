"""`bench quota`, `bench usage`, `bench sql` and `bench collection save --shadows`: arguments → request,
reply → tables or the reply verbatim, refusals → exit codes (SPEC L-5, L-7, CLI-4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import pytest
from typer.testing import Result

from tests.unit.cli.conftest import FakeServer

Bench = Callable[..., Result]
WIDE = {"COLUMNS": "300"}  # Rich fits tables to the terminal: wide enough that no cell wraps

QUOTA: dict[str, Any] = {
    "ok": True,
    "at": "2026-12-02T10:00:00Z",
    "quotas": [{"connection": "groq", "alias": "llama-70b", "metric": "requests", "window": "minute",
                "left": 7, "of": 30, "resets": "2026-12-02T10:01:00Z", "source": "x-ratelimit",
                "observed_at": "2026-12-02T09:59:58Z", "age_s": 2}],
    "sent": [{"connection": "groq", "day": {"requests": 41, "tokens": 5120},
              "month": {"requests": 977, "tokens": 880123}}],
    "resting": [{"alias": "llama-70b", "connection": "groq", "until": "2026-12-02T10:29:00Z",
                 "minutes_left": 29, "wait": "stated"}],
    "limits": {
        "user": [{"scope": "connection", "name": "groq", "rpm": 30, "rpd": None, "tpm": None, "tpd": None,
                  "rpmo": 5000, "at": "2026-12-01T08:00:00Z", "by": "admin"}],
        "learned": [{"alias": "llama-70b", "connection": "groq", "axis": "tpm", "limit": 6000,
                     "date": "2026-11-30", "where": "call p20261130-101010-ab12.member1", "enforced": True}],
    },
}


def rows_of(output: str, title: str) -> list[list[str]]:
    """The body rows of the Rich table printed under `title`, as cell texts."""
    lines = output.split(title + "\n", 1)[1].splitlines()
    body = []
    for line in lines[3:]:  # top border, header, rule
        if not line.startswith("│"):
            break
        body.append([cell.strip() for cell in line.strip("│").split("│")])
    return body


def test_quota_draws_the_four_views(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/quota", body=QUOTA)
    result = bench("quota", env=WIDE)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert rows_of(out, "quota records") == [
        ["groq", "llama-70b", "requests", "minute", "7", "30", "2026-12-02T10:01:00Z", "x-ratelimit", "2"]
    ]
    assert rows_of(out, "sent") == [["groq", "41", "5120", "977", "880123"]]
    assert rows_of(out, "resting") == [["llama-70b", "groq", "2026-12-02T10:29:00Z", "29", "stated"]]
    assert rows_of(out, "your limits") == [
        ["connection", "groq", "30", "", "", "", "5000", "2026-12-01T08:00:00Z", "admin"]
    ]
    assert rows_of(out, "learned limits") == [
        ["llama-70b", "groq", "tpm", "6000", "2026-11-30", "call p20261130-101010-ab12.member1", "yes"]
    ]
    assert "as of 2026-12-02T10:00:00Z" in result.stderr


def test_quota_says_when_a_view_is_empty_and_json_is_verbatim(bench: Bench, server: FakeServer) -> None:
    empty = {"ok": True, "at": "2026-12-02T10:00:00Z", "quotas": [], "sent": [], "resting": [],
             "limits": {"user": [], "learned": []}}
    server.answer("GET", "/api/quota", body=empty)
    result = bench("quota")
    assert result.exit_code == 0, result.output
    for title in ("quota records", "sent", "resting", "your limits", "learned limits"):
        assert f"{title}: none" in result.stderr
    assert result.stdout == ""
    raw = bench("quota", "--json")
    assert json.loads(raw.stdout) == empty


def test_quota_refused_by_the_ledger_exits_1_with_its_words(bench: Bench, server: FakeServer) -> None:
    why = "the ledger is not running; start the stack"
    server.answer("GET", "/api/quota", 503, {"ok": False, "errors": [why]})
    result = bench("quota")
    assert result.exit_code == 1
    assert f"bench: {why}" in result.stderr


def test_usage_sends_only_the_filters_given(bench: Bench, server: FakeServer) -> None:
    row = {"t": "2026-12-02T09:00:00Z", "call": "p1.member1", "alias": "mini", "connection": "groq",
           "purpose": "panel", "status": "ok", "failure": None, "http_status": 200, "attempts": 1,
           "tokens_in": 12, "tokens_out": 30, "seconds": 0.8, "paced": "sent", "caller": "c-1"}
    server.answer("GET", "/api/usage", body={"ok": True, "rows": [row]})
    result = bench("usage", "--connection", "groq", "--since", "2026-12-01T00:00:00Z", "--limit", "5",
                   env=WIDE)
    assert result.exit_code == 0, result.output
    assert parse_qs(server.seen[-1].url.query.decode()) == {
        "connection": ["groq"], "since": ["2026-12-01T00:00:00+00:00"], "limit": ["5"],
    }
    assert rows_of(result.stdout, "usage") == [[
        "2026-12-02T09:00:00Z", "p1.member1", "mini", "groq", "panel", "ok", "", "200", "1", "12", "30",
        "0.8", "sent",
    ]]
    assert bench("usage", "--alias", "mini", "--purpose", "route").exit_code == 0
    assert parse_qs(server.seen[-1].url.query.decode()) == {"alias": ["mini"], "purpose": ["route"],
                                                            "limit": ["100"]}


@pytest.mark.parametrize("args", [["--since", "last tuesday"], ["--limit", "0"], ["--limit", "1001"]])
def test_usage_bad_options_are_usage_errors_and_nothing_is_asked(
    bench: Bench, server: FakeServer, args: list[str]
) -> None:
    result = bench("usage", *args)
    assert result.exit_code == 2
    assert server.seen == []


def test_sql_posts_the_query_and_draws_rows_by_position(bench: Bench, server: FakeServer) -> None:
    reply = {"ok": True, "columns": ["n", "n"], "types": ["INTEGER", "INTEGER"], "rows": [[1, None], [2, 3]],
             "truncated": True}
    server.answer("POST", "/api/sql", body=reply)
    result = bench("sql", "SELECT 1 AS n, NULL AS n", "--max-rows", "2")
    assert result.exit_code == 0, result.output
    assert server.body() == {"sql": "SELECT 1 AS n, NULL AS n", "max_rows": 2}
    assert rows_of(result.stdout, "result") == [["1", ""], ["2", "3"]]
    assert "2 row(s); more matched" in result.stderr


@pytest.mark.parametrize("args", [[], ["-"]])
def test_sql_reads_a_piped_query(bench: Bench, server: FakeServer, args: list[str]) -> None:
    server.answer("POST", "/api/sql", body={"ok": True, "columns": [], "types": [], "rows": [],
                                            "truncated": False})
    result = bench("sql", *args, stdin="SELECT count(*)\nFROM usage\n")
    assert result.exit_code == 0, result.output
    assert server.body() == {"sql": "SELECT count(*)\nFROM usage\n", "max_rows": 1000}
    assert "0 row(s)" in result.stderr


def test_sql_without_a_query_is_a_usage_error(
    bench: Bench, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert bench("sql", stdin="  \n").exit_code == 2
    monkeypatch.setattr("cli.commands.sql.stdin_is_terminal", lambda: True)
    on_terminal = bench("sql")
    assert on_terminal.exit_code == 2
    assert "pipe it in" in on_terminal.stderr
    assert server.seen == []


def test_sql_refused_by_the_ledger(bench: Bench, server: FakeServer) -> None:
    why = "only SELECT (or WITH … SELECT) queries are answered: the ledger is read-only"
    server.answer("POST", "/api/sql", 400, {"ok": False, "errors": [why]})
    result = bench("sql", "DELETE FROM usage")
    assert result.exit_code == 1
    assert f"bench: {why}" in result.stderr
    raw = bench("--json", "sql", "DELETE FROM usage")
    assert json.loads(raw.stdout) == {"ok": False, "errors": [why]}


def test_collection_save_sends_shadows_and_an_empty_list_clears_them(
    bench: Bench, server: FakeServer
) -> None:
    server.answer("POST", "/api/collection", body={"ok": True, "collection": {"name": "agents"}})
    assert bench("collection", "save", "agents", "--shadows", "qwen, mini").exit_code == 0
    assert server.body() == {"name": "agents", "shadows": ["qwen", "mini"]}
    assert bench("collection", "save", "agents", "--shadows", "").exit_code == 0
    assert server.body() == {"name": "agents", "shadows": []}
    assert bench("collection", "save", "agents", "--description", "x").exit_code == 0
    assert "shadows" not in server.body()


@pytest.mark.parametrize("command", [["quota"], ["usage"], ["sql"]])
def test_help_has_an_example(bench: Bench, command: list[str]) -> None:
    result = bench(*command, "--help")
    assert result.exit_code == 0
    example = result.stdout.split("Example:", 1)[1].split("Options:", 1)[0]
    assert f"bench {command[0]}" in example

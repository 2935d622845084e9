"""`bench` commands end to end in-process: arguments → request, reply → output and exit code (SPEC CLI-4)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from typer.testing import CliRunner, Result

from cli.main import app
from shared.natsserver import free_port
from tests.unit.cli.conftest import FakeServer

Bench = Callable[..., Result]
TOKEN = "admin-token-0123456789"
KEY = "gateway-key-0123456789"


def test_status_with_nothing_listening_exits_3_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = CliRunner().invoke(app, ["status", "--url", url])
    assert result.exit_code == 3
    assert f"bench: no server answered at {url}" in result.stderr
    assert result.stdout == ""


def test_status_up(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/status", body={
        "ok": True, "version": "9.9", "gateway": "http://127.0.0.1:8122/v1", "models": 3, "retired": 1,
        "collections": 2, "endpoints": 1, "default_endpoint": "fake", "auth": False, "keys_required": True,
        "gateway_keys": 4, "scheduler": "off", "data": "/data",
    })
    result = bench("status")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "http://127.0.0.1:8122: up (benchwarmers 9.9); OpenAI base URL http://127.0.0.1:8122/v1"
    assert "3 models (1 retired), 2 collections, 1 endpoints (default fake)" in lines[1]
    assert "no admin token, keys required, 4 gateway keys; scheduler off" in lines[2]


def test_json_prints_the_reply_verbatim_wherever_the_flag_is(bench: Bench, server: FakeServer) -> None:
    server.routes[("GET", "/api/status")] = httpx.Response(200, text='{"ok":true,  "odd": 1}')
    for args in (["--json", "status"], ["status", "--json"]):
        result = bench(*args)
        assert result.exit_code == 0
        assert result.stdout == '{"ok":true,  "odd": 1}\n'


def test_url_after_the_command_and_a_pasted_v1_suffix(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/status", body={"ok": True})
    result = bench("status", "--url", "http://bench.example:9000/v1/")
    assert result.exit_code == 0, result.output
    assert str(server.seen[0].url) == "http://bench.example:9000/api/status"


def test_url_from_the_environment(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/status", body={"ok": True})
    result = bench("status", env={"BENCHWARMERS_URL": "http://elsewhere:8123"})
    assert result.exit_code == 0, result.output
    assert str(server.seen[0].url) == "http://elsewhere:8123/api/status"


@pytest.mark.parametrize(
    ("args", "env"), [(["--url", "127.0.0.1:8122"], {}), ([], {"BENCHWARMERS_URL": "ftp://x"})]
)
def test_a_url_that_is_not_http_is_a_usage_error(
    bench: Bench, server: FakeServer, args: list[str], env: dict[str, str]
) -> None:
    result = bench(*args, "status", env=env)
    assert result.exit_code == 2
    assert "is not an http(s) URL" in result.stderr
    assert server.seen == []


def test_endpoint_add_posts_the_endpoint_and_names_the_key_variable(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/endpoint", body={"ok": True, "endpoint": {"name": "open-router"}})
    result = bench(
        "endpoint", "add", "open-router", "--base", "https://openrouter.ai/api/v1", "--api", "chat",
        "--kind", "aggregator", "--header", "X-Title=bench", "--header", "HTTP-Referer=https://x=y",
        "--default",
    )
    assert result.exit_code == 0, result.output
    assert server.body() == {
        "name": "open-router", "base": "https://openrouter.ai/api/v1", "api": "chat", "kind": "aggregator",
        "headers": {"X-Title": "bench", "HTTP-Referer": "https://x=y"}, "default": True,
    }
    assert "BENCHWARMERS_KEY_OPEN_ROUTER" in result.stderr


def test_endpoint_add_sends_only_what_was_given(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/endpoint", body={"ok": True, "endpoint": {}})
    assert bench("endpoint", "add", "local", "--base", "http://127.0.0.1:11434/v1").exit_code == 0
    assert server.body() == {"name": "local", "base": "http://127.0.0.1:11434/v1"}


def test_a_bad_header_is_a_usage_error_and_nothing_is_sent(bench: Bench, server: FakeServer) -> None:
    result = bench("endpoint", "add", "x", "--base", "http://b", "--header", "no-equals")
    assert result.exit_code == 2
    assert "NAME=VALUE" in result.output
    assert server.seen == []


def test_missing_base_and_bad_choices_exit_2(bench: Bench, server: FakeServer) -> None:
    assert bench("endpoint", "add", "x").exit_code == 2
    assert bench("endpoint", "add", "x", "--base", "http://b", "--api", "soap").exit_code == 2
    assert bench("collection", "save", "c", "--members", "a", "--reply", "some").exit_code == 2
    assert bench("nonsense").exit_code == 2
    assert server.seen == []


def test_admin_refusal_exits_1_with_every_reason(bench: Bench, server: FakeServer) -> None:
    errors = ["name must match ^[a-z0-9]", "base must be http(s)"]
    server.answer("POST", "/api/endpoint", 400, {"ok": False, "errors": errors})
    result = bench("endpoint", "add", "Bad_Name", "--base", "ftp://x")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == ["bench: name must match ^[a-z0-9]", "bench: base must be http(s)"]


def test_a_reply_saying_not_ok_is_a_refusal_even_with_200(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/models", 200, {"ok": False, "errors": ["unknown endpoint nowhere"]})
    result = bench("model", "add", "m", "--endpoint", "nowhere")
    assert result.exit_code == 1
    assert "bench: unknown endpoint nowhere" in result.stderr


def test_the_admin_token_goes_to_api_routes_only(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/v1/models", body={"object": "list", "data": []})
    server.answer("POST", "/api/collection", body={"ok": True, "collection": {}})
    env = {"BENCHWARMERS_ADMIN_TOKEN": TOKEN, "BENCHWARMERS_KEY": KEY}
    assert bench("collections", env=env).exit_code == 0
    assert bench("collection", "save", "core", "--members", "a", env=env).exit_code == 0
    gateway, admin = server.seen
    assert gateway.headers["authorization"] == f"Bearer {KEY}"
    assert admin.headers["authorization"] == f"Bearer {TOKEN}"


def test_401_names_the_missing_variable_and_never_the_secret(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/ledger/rebuild", 401, {"ok": False, "errors": ["admin token required"]})
    result = bench("ledger", "rebuild", "--yes", env={"BENCHWARMERS_ADMIN_TOKEN": TOKEN})
    assert result.exit_code == 1
    assert "BENCHWARMERS_ADMIN_TOKEN" in result.stderr
    assert TOKEN not in result.output


@pytest.mark.parametrize(
    "body",
    [
        {"detail": "Not Found"},
        {"ok": False, "errors": ["unknown endpoint"]},
        {"error": {"message": "no route POST /api/ledger/rebuild. The POST routes are: ..."}},
    ],
)
def test_a_route_the_server_lacks_means_an_older_server(
    bench: Bench, server: FakeServer, body: dict[str, object]
) -> None:
    server.answer("POST", "/api/ledger/rebuild", 404, body)
    result = bench("ledger", "rebuild", "--yes")
    assert result.exit_code == 1
    assert "older than this bench" in result.stderr
    assert "POST /api/ledger/rebuild" in result.stderr


def test_a_404_with_its_own_reason_is_shown_as_such(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/models", 404, {"ok": False, "errors": ["unknown endpoint 'nowhere'"]})
    result = bench("model", "add", "m", "--endpoint", "nowhere")
    assert result.exit_code == 1
    assert result.stderr == "bench: unknown endpoint 'nowhere'\n"


def test_html_where_json_was_expected_means_an_older_server(bench: Bench, server: FakeServer) -> None:
    server.routes[("POST", "/api/models")] = httpx.Response(200, text="<html>dashboard</html>")
    result = bench("model", "add", "m", "--endpoint", "e")
    assert result.exit_code == 1
    assert "older than this bench" in result.stderr


def test_a_server_error_exits_1(bench: Bench, server: FakeServer) -> None:
    server.routes[("GET", "/api/status")] = httpx.Response(502, text="bad gateway")
    result = bench("status")
    assert result.exit_code == 1
    assert "bench: GET /api/status failed with HTTP 502" in result.stderr


def test_a_timeout_exits_1(bench: Bench) -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    result = bench("status", handler=slow)
    assert result.exit_code == 1
    assert "did not answer in time" in result.stderr


def test_ctrl_c_exits_130(bench: Bench) -> None:
    def interrupted(request: httpx.Request) -> httpx.Response:
        raise KeyboardInterrupt

    assert bench("status", handler=interrupted).exit_code == 130


def test_model_add_sends_given_fields_and_tri_state_flags(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/models", body={"ok": True, "model": {"alias": "mini"}})
    result = bench(
        "model", "add", "openai/gpt-4o-mini", "--endpoint", "openrouter", "--alias", "mini",
        "--context-window", "128000", "--max-output", "4096", "--role", "coder", "--ad-hoc",
        "--vision", "--no-tools",
    )
    assert result.exit_code == 0, result.output
    assert server.body() == {
        "served": "openai/gpt-4o-mini", "endpoint": "openrouter", "alias": "mini", "context_window": 128000,
        "max_output": 4096, "role": "coder", "ad_hoc": True, "vision": True, "tools": False,
    }
    assert bench("model", "add", "m", "--endpoint", "e").exit_code == 0
    assert server.body() == {"served": "m", "endpoint": "e"}


def test_model_add_refuses_a_zero_window(bench: Bench, server: FakeServer) -> None:
    assert bench("model", "add", "m", "--endpoint", "e", "--context-window", "0").exit_code == 2
    assert server.seen == []


def test_collection_save_splits_lists(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/collection", body={"ok": True, "collection": {"name": "core"}})
    result = bench(
        "collection", "save", "core", "--members", " a, b,,c ", "--tags", "daily,code", "--reply", "merged",
        "--merger", "a", "--description", "the daily panel", "--shape", "code",
    )
    assert result.exit_code == 0, result.output
    assert server.body() == {
        "name": "core", "members": ["a", "b", "c"], "tags": ["daily", "code"], "reply": "merged",
        "merger": "a", "description": "the daily panel", "shape": "code",
    }
    assert "bench/core" in result.stderr


def test_collection_save_needs_a_member(bench: Bench, server: FakeServer) -> None:
    assert bench("collection", "save", "core", "--members", " , ").exit_code == 2
    assert server.seen == []


def test_ledger_rebuild_without_yes_and_no_terminal_exits_2(bench: Bench, server: FakeServer) -> None:
    result = bench("ledger", "rebuild")
    assert result.exit_code == 2
    assert "--yes" in result.stderr
    assert server.seen == []


def test_ledger_rebuild_asks_on_a_terminal(
    bench: Bench, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.answer("POST", "/api/ledger/rebuild", body={"ok": True, "events": 1200, "seconds": 0.8})
    monkeypatch.setattr("cli.output.stdin_is_terminal", lambda: True)
    declined = bench("ledger", "rebuild", stdin="n\n")
    assert declined.exit_code == 1
    assert server.seen == []
    accepted = bench("ledger", "rebuild", stdin="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert "ledger rebuilt: 1200 events in 0.8 s" in accepted.stdout


def test_ledger_rebuild_with_yes(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/ledger/rebuild", body={"ok": True, "events": 3, "seconds": 0.01})
    result = bench("ledger", "rebuild", "--yes")
    assert result.exit_code == 0, result.output
    assert [(r.method, r.url.path) for r in server.seen] == [("POST", "/api/ledger/rebuild")]


@pytest.mark.parametrize(
    "command",
    [
        ["up"], ["down"], ["status"], ["ask"], ["verdict"], ["pending"], ["models"], ["collections"],
        ["endpoints"], ["keys"], ["changes"], ["endpoint", "add"], ["endpoint", "test"], ["endpoint", "key"],
        ["endpoint", "rm"], ["endpoint", "default"], ["model", "add"], ["model", "rename"], ["model", "role"],
        ["model", "ad-hoc"], ["model", "max-tokens"], ["model", "retire"], ["model", "restore"],
        ["collection", "save"], ["collection", "show"], ["collection", "rm"], ["key", "create"],
        ["key", "revoke"], ["settings", "gateway"], ["limits", "show"], ["limits", "connection"],
        ["limits", "model"], ["ledger", "rebuild"], ["mcp"], ["mcp", "stop-hook"], ["mcp", "install"],
        ["endpoint", "connect"], ["onboard"], ["candidates"], ["dismiss"],
    ],
)
def test_every_command_help_has_an_example(bench: Bench, command: list[str]) -> None:
    result = bench(*command, "--help")
    assert result.exit_code == 0
    example = result.stdout.split("Example:", 1)[1].split("Options:", 1)[0]
    assert "bench" in example
    assert command[-1] in example


def test_version(bench: Bench) -> None:
    result = bench("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("benchwarmers")


def test_json_prints_a_refusal_verbatim_too(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/collection", 400, {"ok": False, "errors": ["member 'x' is not a model"]})
    result = bench("--json", "collection", "save", "c", "--members", "x")
    assert result.exit_code == 1
    assert result.stdout == '{"ok":false,"errors":["member \'x\' is not a model"]}\n'
    assert "bench: member 'x' is not a model" in result.stderr


def test_results_read_as_a_table(bench: Bench, server: FakeServer) -> None:
    model = {"alias": "mini", "ad_hoc": False, "vision": True, "limits": {"rpm": 30, "tpm": None}, "role": ""}
    server.answer("POST", "/api/models", body={"ok": True, "model": model})
    result = bench("model", "add", "m", "--endpoint", "e")
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in result.stdout.splitlines()
            if line.count("│") == 3}
    assert rows == {"alias": "mini", "ad_hoc": "no", "vision": "yes", "limits": "rpm: 30"}


def test_server_words_are_never_rich_markup(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/collection", body={"ok": True, "collection": {"note": "[/bold] [red]x"}})
    result = bench("collection", "save", "c", "--members", "a")
    assert result.exit_code == 0, result.output
    assert "[/bold] [red]x" in result.stdout

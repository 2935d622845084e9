"""Keys without editing the environment: `bench endpoint add --key-stdin` and `bench endpoint connect`
(OpenRouter's PKCE sign-in against a local fake authorization server) put the key in the data folder's
secrets file and nowhere else: not in the request to the server, not in the output; a refused add takes
it back out."""

from __future__ import annotations

import stat
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from typer.testing import Result

from cli import oauth
from services.caller.keys import KeyStore
from tests.fakes.authorization import FakeAuthorization
from tests.unit.cli.conftest import FakeServer

Bench = Callable[..., Result]
KEY = "fake-planted-key-0123456789abcdef"
SAVED = {"ok": True, "endpoint": {"name": "openrouter"}, "listing": {"note": "the callers listed 3 models"},
         "saved": True}


def test_key_stdin_goes_to_the_secrets_file_only(bench: Bench, server: FakeServer, tmp_path: Path) -> None:
    server.answer("POST", "/api/endpoint", body=SAVED)
    home = tmp_path / "home"
    result = bench("endpoint", "add", "openrouter", "--base", "https://openrouter.ai/api/v1", "--key-stdin",
                   stdin=KEY + "\n", env={"BENCHWARMERS_HOME": str(home)})
    assert result.exit_code == 0, result.output
    path = home / "secrets.env"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert KeyStore(env={}, secrets_path=path).key_for("openrouter") == KEY
    assert KEY not in result.output and KEY.encode() not in server.seen[0].content
    assert server.body() == {"name": "openrouter", "base": "https://openrouter.ai/api/v1"}


def test_a_refused_add_takes_the_key_back_out(bench: Bench, server: FakeServer, tmp_path: Path) -> None:
    refusal = {"ok": False, "errors": ["its model list failed"]}
    server.answer("POST", "/api/endpoint", status=400, body=refusal)
    home = tmp_path / "home"
    result = bench("endpoint", "add", "nope", "--base", "https://nope.example/v1", "--key-stdin",
                   stdin=KEY + "\n", env={"BENCHWARMERS_HOME": str(home)})
    assert result.exit_code == 1 and "its model list failed" in result.stderr
    assert not (home / "secrets.env").exists() and KEY not in result.output


def browse(url: str) -> None:
    """The user's browser: follows the provider's redirect back to the loopback callback."""
    threading.Thread(target=lambda: httpx.get(url, follow_redirects=True, timeout=10), daemon=True).start()


def test_connect_signs_in_with_pkce_and_keeps_the_key_private(
    bench: Bench, server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.answer("POST", "/api/endpoint", body=SAVED)
    auth = FakeAuthorization(KEY).start()
    home = tmp_path / "home"
    opened: list[str] = []

    def open_browser(url: str) -> bool:
        opened.append(url)
        browse(url)
        return True

    monkeypatch.setattr(webbrowser, "open", open_browser)
    try:
        result = bench("endpoint", "connect", "openrouter", "--port", "0", "--auth-url", f"{auth.url}/auth",
                       "--keys-url", f"{auth.url}/api/v1/auth/keys", env={"BENCHWARMERS_HOME": str(home)})
    finally:
        auth.stop()
    assert result.exit_code == 0, result.output
    assert opened and opened[0].startswith(f"{auth.url}/auth?callback_url=http%3A%2F%2Flocalhost%3A")
    assert KeyStore(env={}, secrets_path=home / "secrets.env").key_for("openrouter") == KEY
    assert KEY not in result.output and KEY.encode() not in server.seen[0].content
    assert server.body() == {"name": "openrouter", "base": "https://openrouter.ai/api/v1"}
    assert [e["code_challenge_method"] for e in auth.exchanges] == ["S256"]


def test_no_sign_in_stores_nothing(bench: Bench, server: FakeServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = bench("endpoint", "connect", "openrouter", "--port", "0", "--no-browser", "--wait-s", "1",
                   "--auth-url", "http://127.0.0.1:9/auth", env={"BENCHWARMERS_HOME": str(home)})
    assert result.exit_code == 1 and "no sign-in came back within 1s" in result.stderr
    assert "Sign in at: http://127.0.0.1:9/auth?callback_url=" in result.stderr
    assert not (home / "secrets.env").exists() and server.seen == []


def test_a_code_is_traded_only_with_its_verifier_and_the_page_keeps_nothing() -> None:
    auth = FakeAuthorization(KEY).start()
    try:
        verifier = oauth.verifier()
        catch = oauth.Callback("n0nce")
        url = oauth.auth_url(f"{auth.url}/auth", "http://localhost:1/connect/callback/n0nce",
                             oauth.challenge(verifier))
        back = httpx.get(url).headers["location"]
        status, page = catch.take(back.removeprefix("http://localhost:1"))
        assert status == 200 and page.startswith("Signed in") and catch.code
        assert catch.take("/connect/callback/other?code=x")[0] == 404
        with httpx.Client() as http, pytest.raises(oauth.SignInFailed, match=r"refused \(HTTP 403\)"):
            oauth.exchange(f"{auth.url}/api/v1/auth/keys", catch.code, oauth.verifier(), http)
    finally:
        auth.stop()
    assert oauth.PAGE_HEADERS["Cache-Control"] == "no-store"
    assert oauth.PAGE_HEADERS["Referrer-Policy"] == "no-referrer"


def test_on_a_terminal_the_key_is_asked_with_a_hidden_prompt(
    bench: Bench, server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.answer("POST", "/api/endpoint", body=SAVED)
    asked: list[str] = []

    def hidden(prompt: str) -> str:
        asked.append(prompt)
        return KEY

    monkeypatch.setattr("cli.commands.endpoint.stdin_is_terminal", lambda: True)
    monkeypatch.setattr("cli.commands.endpoint.getpass.getpass", hidden)
    home = tmp_path / "home"
    result = bench("endpoint", "add", "openrouter", "--base", "https://openrouter.ai/api/v1", "--key-stdin",
                   env={"BENCHWARMERS_HOME": str(home)})
    assert result.exit_code == 0, result.output
    assert asked == ["openrouter key (hidden): "]
    assert KeyStore(env={}, secrets_path=home / "secrets.env").key_for("openrouter") == KEY

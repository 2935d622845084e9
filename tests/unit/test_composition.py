"""The composition root (`python -m services gateway [console]`): which names it takes, and what each
choice serves. Built without I/O."""

from __future__ import annotations

import subprocess
import sys

import pytest

from services.__main__ import parse
from services.console.surface import Console
from services.gateway.app import create_app
from shared.bus_credentials import BusLogin
from shared.settings import GatewaySettings


def paths(console: bool) -> set[str]:
    """The paths the app answers, as its method table (the guard's and the not-found reply's) knows them."""
    app = create_app(GatewaySettings(port=8122), BusLogin("gateway", b"unused"),
                     surfaces=[Console()] if console else [])
    known = ("/api/collections", "/api/gateway-keys", "/login", "/", "/v1/chat/completions", "/v1/messages",
             "/bench/verdict", "/health")
    return {path for path in known if app.state.methods.allowed(path)}


def test_the_gateway_comes_first_and_the_console_beside_it() -> None:
    assert parse(["gateway"]) == ["gateway"]
    assert parse(["gateway", "console"]) == ["gateway", "console"]


@pytest.mark.parametrize("argv", [["console"], ["seater"], ["gateway", "ledger"], []])
def test_other_names_are_refused_with_the_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(argv)
    assert exit_.value.code == 2
    assert "python -m services" in capsys.readouterr().err


def test_the_console_adds_the_admin_api_and_the_pages_and_the_gateway_alone_has_neither() -> None:
    alone, both = paths(console=False), paths(console=True)
    operator = {"/api/collections", "/api/gateway-keys", "/login", "/"}
    assert operator <= both and not operator & alone
    assert {"/v1/chat/completions", "/v1/messages", "/bench/verdict", "/health"} <= alone <= both


def test_the_root_explains_itself() -> None:
    out = subprocess.run([sys.executable, "-m", "services", "--help"], capture_output=True, text=True,
                         timeout=60, check=True)
    assert "console" in out.stdout and "one process" in out.stdout

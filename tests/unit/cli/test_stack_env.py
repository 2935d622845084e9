"""Invariant 5 for the local stack: provider keys reach the callers' environment only."""

from __future__ import annotations

from cli.stack import SERVICES, env_for

BASE = {"PATH": "/bin", "BENCHWARMERS_KEY_OPENAI": "sk-planted", "BENCH_SECRETS_PATH": "/run/keys",
        "BENCHWARMERS_ADMIN_TOKEN": "t" * 20}


def test_only_callers_get_provider_keys() -> None:
    for service in SERVICES:
        env = env_for(service, BASE)
        has_keys = "BENCHWARMERS_KEY_OPENAI" in env and "BENCH_SECRETS_PATH" in env
        assert has_keys == (service == "caller"), service
        assert env["PATH"] == "/bin"


def test_the_admin_token_still_reaches_the_gateway() -> None:
    assert env_for("gateway", BASE)["BENCHWARMERS_ADMIN_TOKEN"] == "t" * 20

"""Hosts, origins and the start-up rules (SEC-1, SEC-2, SEC-5), without I/O."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from services.gateway.allow import Allowed, preflight_headers, startup_problems
from shared.settings import GatewaySettings


def settings(**fields: object) -> GatewaySettings:
    return GatewaySettings.model_validate({"port": 8122, **fields})


def test_loopback_names_need_the_port() -> None:
    allowed = Allowed.from_settings(settings())
    for host in ("127.0.0.1:8122", "localhost:8122", "LocalHost:8122", "[::1]:8122"):
        assert allowed.host_ok(host)
    for refused in ("127.0.0.1", "localhost", "127.0.0.1:9999", "evil.example:8122", "", None):
        assert not allowed.host_ok(refused)


def test_allowed_hosts_and_the_public_url_add_hosts_and_origins() -> None:
    allowed = Allowed.from_settings(
        settings(
            allowed_hosts="bench.lan, box:9000",
            allowed_origins="https://app.example/",
            public_url="https://bench.example.com",
        )
    )
    assert allowed.host_ok("bench.lan") and allowed.host_ok("bench.lan:8122") and allowed.host_ok("box:9000")
    assert allowed.host_ok("bench.example.com") and not allowed.host_ok("box")
    for origin in (
        "http://localhost:8122",
        "https://app.example",
        "https://bench.example.com",
        "http://bench.lan",
    ):
        assert allowed.origin_ok(origin), origin
    assert not allowed.origin_ok("https://evil.example") and not allowed.origin_ok("null")


def test_a_preflight_echoes_the_origin_and_only_plain_requested_headers() -> None:
    headers = preflight_headers("https://app.example", "x-stainless-lang, Content-Type")
    assert headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert headers["Access-Control-Allow-Headers"] == "Authorization, Content-Type, x-stainless-lang"
    assert headers["Access-Control-Max-Age"] == "600" and headers["Vary"] == "Origin"
    assert "x y" not in preflight_headers("https://a", "x y")["Access-Control-Allow-Headers"]
    too_many = ",".join(f"h{i}" for i in range(33))
    assert (
        preflight_headers("https://a", too_many)["Access-Control-Allow-Headers"]
        == "Authorization, Content-Type"
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"bind": "0.0.0.0"}, "set BENCHWARMERS_ADMIN_TOKEN"),
        ({"bind": "0.0.0.0", "admin_token": SecretStr("x" * 16)}, "set BENCH_ALLOWED_HOSTS"),
        ({"allowed_hosts": "https://bench.example"}, "BENCH_ALLOWED_HOSTS has 'https://bench.example'"),
        ({"allowed_hosts": "gateway, *.example"}, "BENCH_ALLOWED_HOSTS has '*.example'"),
        ({"allowed_hosts": "gateway/api"}, "BENCH_ALLOWED_HOSTS"),
        ({"allowed_hosts": "gateway:99999"}, "BENCH_ALLOWED_HOSTS"),
        ({"allowed_hosts": "bad host"}, "BENCH_ALLOWED_HOSTS"),
        ({"bind": "192.168.1.5", "admin_token": SecretStr("x" * 15)}, "at least 16"),
        ({"admin_token": SecretStr("short")}, "at least 16"),
        ({"public_url": "https://user:pw@bench.example"}, "BENCHWARMERS_PUBLIC_URL"),
        ({"public_url": "https://bench.example/prefix"}, "BENCHWARMERS_PUBLIC_URL"),
        ({"public_url": "ftp://bench.example"}, "BENCHWARMERS_PUBLIC_URL"),
    ],
)
def test_sec1_refuses_to_start_unguarded(fields: dict[str, object], problem: str) -> None:
    found = startup_problems(settings(**fields))
    assert any(problem in p for p in found), found


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"bind": "127.0.0.2"},
        {"bind": "::1"},
        {"bind": "localhost"},
        {"bind": "0.0.0.0", "admin_token": SecretStr("x" * 16), "public_url": "https://bench.example:8443/"},
        {"bind": "0.0.0.0", "admin_token": SecretStr("x" * 16),
         "allowed_hosts": "gateway,gateway.benchwarmers.svc.cluster.local,bench.example:443,10.0.0.7,"
                          "[fd00::1]:80,"},
    ],
)
def test_sec1_lets_a_guarded_gateway_start(fields: dict[str, object]) -> None:
    assert startup_problems(settings(**fields)) == []

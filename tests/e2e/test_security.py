"""Who may call what, against a whole stack with an admin token and two gateway replicas (SPEC SEC-1..SEC-6,
A-58..A-71, A-100): the Host and Origin guard, the admin login, gateway keys with their scope and an rpm cap
counted across both replicas, revocation seen by every replica within a second, CORS, and what the access
log shows."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from cli.stack import Child, Stack
from shared import processes, subjects
from shared.natsserver import free_port
from tests.e2e.conftest import admin_bus, everything_on_the_bus, running, wait_until
from tests.fakes.provider import FakeProvider

TOKEN = "admin-token-for-tests-0123"
ORIGIN = "https://app.example"
CHAT = "/v1/chat/completions"
KEY_RE = re.compile(r"^bwk_[A-Za-z0-9_-]{43}$")


def ask(model: str = "bench/sec-core") -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "hello"}]}


@dataclass
class Secured:
    stack: Stack
    admin: httpx.Client  # bearer admin token, replica A
    a: str  # replica A's URL
    b: str  # replica B's URL

    def key(self, name: str, **fields: Any) -> str:
        reply = self.admin.post("/api/gateway-key", json={"name": name, **fields})
        assert reply.status_code == 200, reply.text
        key: str = reply.json()["key"]
        return key


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory, provider: FakeProvider) -> Iterator[Secured]:
    home = tmp_path_factory.mktemp("secured")
    stack = Stack(
        home=home,
        port=free_port(),
        replicas={"gateway": 2},
        extra_env={
            "BENCHWARMERS_ADMIN_TOKEN": TOKEN,
            "BENCHWARMERS_KEY_FAKE": "sk-test-not-a-real-key",
            "BENCH_ALLOWED_ORIGINS": ORIGIN,
        },
    )
    with running(stack):
        a, b = (f"http://127.0.0.1:{port}" for port in stack.gateway_ports)
        admin = httpx.Client(base_url=a, headers={"authorization": f"Bearer {TOKEN}"}, timeout=60)
        for body in (
            {"name": "fake", "base": provider.base_url},
            {"served": "sec-one", "endpoint": "fake", "ad_hoc": True},
            {"served": "sec-two", "endpoint": "fake", "ad_hoc": True},
            {"name": "sec-core", "members": ["sec-one"]},
            {"name": "sec-vision", "members": ["sec-two"]},
        ):
            path = (
                "/api/endpoint"
                if "base" in body
                else "/api/models"
                if "served" in body
                else "/api/collection"
            )
            assert admin.post(path, json=body).status_code == 200
        yield Secured(stack, admin, a, b)


# ---------------------------------------------------------------- SEC-1


@pytest.mark.parametrize("alone", [True, False], ids=["gateway", "gateway+console"])
@pytest.mark.parametrize("token", [None, "fifteen-chars!!"])
def test_a58_no_listening_beyond_loopback_without_a_16_char_token(token: str | None, alone: bool) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}
    env.update({"BENCH_BIND": "0.0.0.0", "BENCH_PORT": str(free_port()), "NATS_URL": "nats://127.0.0.1:1"})
    if token:
        env["BENCHWARMERS_ADMIN_TOKEN"] = token
    done = subprocess.run(
        [sys.executable, "-m", "services.gateway"] if alone else processes.service_command("gateway"),
        env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "BENCHWARMERS_ADMIN_TOKEN" in done.stderr
    if token:
        assert "at least 16" in done.stderr and token not in done.stderr


# ---------------------------------------------------------------- SEC-2


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1", "localhost", "[::1]"])
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/models"),
        ("GET", "/api/status"),
        ("POST", CHAT),
        ("GET", "/login"),
        ("POST", "/api/collection"),
    ],
)
def test_a59_a_wrong_or_portless_host_is_refused_everywhere(
    secured: Secured, host: str, method: str, path: str
) -> None:
    port = secured.stack.port
    reply = httpx.request(method, secured.a + path, json={}, headers={"host": host.format(port=port)})
    assert reply.status_code == 403, reply.text
    assert "Host" in reply.text


def test_a69_health_answers_any_host_without_login(secured: Secured) -> None:
    reply = httpx.get(secured.a + "/health", headers={"host": "evil.example"})
    assert (reply.status_code, reply.json()) == (200, {"ok": True})


@pytest.mark.parametrize("host", ["localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}"])
def test_the_loopback_names_with_the_port_are_allowed(secured: Secured, host: str) -> None:
    reply = secured.admin.get("/api/status", headers={"host": host.format(port=secured.stack.port)})
    assert reply.status_code == 200


def test_a60_posts_must_be_json_from_an_allowed_origin(secured: Secured) -> None:
    key = secured.key("sec-origin")
    auth = {"authorization": f"Bearer {key}"}
    for path, headers in ((CHAT, auth), ("/api/collection", {})):
        reply = secured.admin.post(path, content=b"hi", headers={**headers, "content-type": "text/plain"})
        assert reply.status_code == 415, reply.text
        foreign = secured.admin.post(path, json={}, headers={**headers, "origin": "https://evil.example"})
        assert foreign.status_code == 403, foreign.text
        cross = secured.admin.post(path, json={}, headers={**headers, "sec-fetch-site": "cross-site"})
        assert cross.status_code == 403, cross.text
    allowed = httpx.post(
        secured.a + CHAT,
        json=ask(),
        headers={**auth, "origin": ORIGIN, "sec-fetch-site": "cross-site"},
        timeout=60,
    )
    assert allowed.status_code == 200, allowed.text
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    admin_cross = secured.admin.post(
        "/api/collection", json={}, headers={"origin": ORIGIN, "sec-fetch-site": "cross-site"}
    )
    assert admin_cross.status_code == 403  # the admin API never takes cross-site posts


def test_a61_a_gateway_body_over_20_mb_is_refused_before_it_is_read(secured: Secured) -> None:
    """The request declares 20,000,001 bytes and sends none: the 413 comes anyway."""
    with socket.create_connection(("127.0.0.1", secured.stack.port), timeout=10) as sock:
        sock.sendall(
            f"POST {CHAT} HTTP/1.1\r\nHost: 127.0.0.1:{secured.stack.port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 20000001\r\n\r\n".encode()
        )
        answer = b""
        while not re.search(rb"\r\n\r\n.*}$", answer, re.S):
            more = sock.recv(65536)
            assert more, answer
            answer += more
    head, _, raw = answer.decode().partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 413"), head
    body = json.loads(raw)
    assert "http(s) URLs" in body["error"]["message"] and "20,000,000" in body["error"]["message"]


def test_an_admin_body_over_1_mb_is_refused_even_without_a_length(secured: Secured) -> None:
    chunks = (b"x" * 65536 for _ in range(20))  # streamed: no Content-Length
    reply = secured.admin.post(
        "/api/collection", content=chunks, headers={"content-type": "application/json"}
    )
    assert reply.status_code == 413 and reply.json()["ok"] is False


# ---------------------------------------------------------------- SEC-3


def test_a68_the_admin_side_needs_the_token_or_the_login_cookie(secured: Secured) -> None:
    page = httpx.get(secured.a + "/", follow_redirects=False)
    assert (page.status_code, page.headers["location"]) == (303, "/login")
    assert httpx.get(secured.a + "/login").status_code == 200
    refused = httpx.get(secured.a + "/api/models")
    assert refused.status_code == 401 and refused.json()["ok"] is False
    assert httpx.post(secured.a + "/login", json={"token": "wrong-token-0123456"}).status_code == 401
    login = httpx.post(secured.a + "/login", json={"token": TOKEN})
    assert login.status_code == 200
    cookie = login.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    value = cookie.split(";", 1)[0]
    with_cookie = httpx.get(secured.b + "/api/models", headers={"cookie": value})  # any replica
    assert with_cookie.status_code == 200
    wrong_bearer = httpx.get(
        secured.a + "/api/models", headers={"cookie": value, "authorization": "Bearer x"}
    )
    assert wrong_bearer.status_code == 401  # a wrong bearer is not rescued by the cookie
    assert httpx.get(secured.a + "/v1/models", headers={"cookie": value}).status_code == 401
    key = secured.key("sec-not-admin")
    assert httpx.get(secured.a + "/api/models", headers={"authorization": f"Bearer {key}"}).status_code == 401
    assert httpx.get(secured.a + "/openapi.json").status_code == 401


def test_a63_require_keys_without_a_token_keeps_the_admin_side_open(secured: Secured) -> None:
    """A third gateway on the same bus, with BENCHWARMERS_REQUIRE_KEYS=1 and no token."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "BENCHWARMERS_ADMIN_TOKEN"}
    env.update(
        {
            "NATS_URL": str(secured.stack.nats_url),
            "BENCH_PORT": str(port),
            "BENCHWARMERS_REQUIRE_KEYS": "1",
            "BENCHWARMERS_HOME": str(secured.stack.home),
        }
    )
    child = Child("gateway", 9, env, secured.stack.home / "logs" / "gateway-requires-keys.log")
    child.start()
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _healthy(url), what="the third gateway")
        assert httpx.get(url + "/api/status").json()["keys_required"] is True
        refused = httpx.post(url + CHAT, json=ask())
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == 'Bearer realm="benchwarmers"'
        key = secured.key("sec-third")
        assert httpx.post(url + CHAT, json=ask(), headers={"x-api-key": key}, timeout=60).status_code == 200
    finally:
        child.stop()


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


# ---------------------------------------------------------------- SEC-4


def test_a64_a_key_is_taken_from_the_first_credential_sent(secured: Secured) -> None:
    key = secured.key("sec-creds")
    for headers in ({"authorization": f"Bearer {key}"}, {"x-api-key": key}, {"x-goog-api-key": key}):
        assert httpx.post(secured.a + CHAT, json=ask(), headers=headers, timeout=60).status_code == 200
    assert httpx.get(secured.a + "/v1beta/models", params={"key": key}).status_code == 200
    refused = httpx.get(secured.a + "/v1/models", params={"key": key})
    assert refused.status_code == 401 and "required" in refused.json()["error"]["message"]
    first_bad = httpx.post(
        secured.a + CHAT, json=ask(), headers={"authorization": "Bearer nope", "x-api-key": key}
    )
    assert first_bad.status_code == 401
    assert "start bwk_" in first_bad.json()["error"]["message"]
    malformed = httpx.get(secured.a + "/v1/models", headers={"authorization": key})
    assert malformed.status_code == 401 and "malformed" in malformed.json()["error"]["message"]
    anthropic = httpx.post(secured.a + "/v1/messages", json={}, headers={"x-api-key": "nope"})
    assert anthropic.status_code == 401 and anthropic.json()["type"] == "error"  # the route's own shape


def test_a65_a_scoped_key_sees_and_calls_only_its_collections(secured: Secured) -> None:
    key = secured.key("sec-vision-only", collections=["bench/sec-vision"])
    auth = {"authorization": f"Bearer {key}"}
    ids = [row["id"] for row in httpx.get(secured.b + "/v1/models", headers=auth).json()["data"]]
    assert ids == ["bench/sec-vision", "bench/sec-vision:merged", "bench/sec-vision:route"]
    tags = httpx.get(secured.b + "/api/tags", headers=auth).json()["models"]
    assert {t["name"].split(":")[0] for t in tags} == {"bench/sec-vision"}
    refused = httpx.post(secured.b + CHAT, json=ask("bench/sec-core"), headers=auth)
    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == (
        "the gateway key sec-vision-only may not call bench/sec-core; it may call bench/sec-vision"
    )
    assert (
        httpx.post(secured.b + CHAT, json=ask("bench/sec-vision"), headers=auth, timeout=60).status_code
        == 200
    )


def test_a66_an_rpm_of_1_refuses_the_second_request_with_retry_after(secured: Secured) -> None:
    auth = {"authorization": f"Bearer {secured.key('sec-rpm-one', rpm=1)}"}
    assert httpx.get(secured.a + "/v1/models", headers=auth).status_code == 200  # listings are not counted
    assert httpx.post(secured.a + CHAT, json=ask(), headers=auth, timeout=60).status_code == 200
    second = httpx.post(secured.b + CHAT, json=ask(), headers=auth)
    assert second.status_code == 429
    assert 1 <= int(second.headers["retry-after"]) <= 61
    assert "may make 1 requests a minute" in second.json()["error"]["message"]


def test_an_rpm_cap_holds_across_both_replicas_together(secured: Secured) -> None:
    """20 generation requests at once, half through each replica: exactly 10 get through."""
    auth = {"authorization": f"Bearer {secured.key('sec-rpm-ten', rpm=10)}"}

    def one(i: int) -> int:
        url = (secured.a, secured.b)[i % 2]
        return httpx.post(url + CHAT, json=ask(), headers=auth, timeout=60).status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(one, range(20)))
    assert sorted(statuses) == [200] * 10 + [429] * 10


def test_a67_revoking_a_key_refuses_it_on_the_other_replica_within_a_second(secured: Secured) -> None:
    key = secured.key("sec-revoked")
    assert KEY_RE.match(key)
    auth = {"authorization": f"Bearer {key}"}
    assert httpx.get(secured.b + "/v1/models", headers=auth).status_code == 200
    reply = secured.admin.post("/api/gateway-key/remove", json={"name": "sec-revoked"})
    assert reply.status_code == 200
    revoked_at = time.monotonic()
    while httpx.get(secured.b + "/v1/models", headers=auth).status_code != 401:
        assert time.monotonic() - revoked_at < 1.0, "replica B still takes a revoked key after 1 s"
    assert httpx.get(secured.a + "/v1/models", headers=auth).status_code == 401
    listed = secured.admin.get("/api/gateway-keys").json()
    assert "sec-revoked" not in {k["name"] for k in listed["keys"]}
    assert key not in json.dumps(listed) and key not in secured.admin.get("/api/changes").text


def test_a67_a_key_is_never_stored_only_its_hash(secured: Secured) -> None:
    key = secured.key("sec-stored")
    auth = {"authorization": f"Bearer {key}"}
    assert httpx.post(secured.a + CHAT, json=ask(), headers=auth, timeout=60).status_code == 200
    assert httpx.get(secured.a + "/v1beta/models", params={"key": key}).status_code == 200
    stored = asyncio.run(everything_on_the_bus(secured.stack))
    assert key not in stored
    listed = secured.admin.get("/api/gateway-keys").json()["keys"]
    row = next(k for k in listed if k["name"] == "sec-stored")
    assert row["hint"] == key[-4:] and row["last_used"]
    assert key not in json.dumps(listed)
    for log in (secured.stack.home / "logs").glob("*.log"):
        assert key not in log.read_text(errors="replace"), log.name


# ---------------------------------------------------------------- SEC-5, SEC-6, A-100


def test_a70_preflight_echoes_an_allowed_origin_only(secured: Secured) -> None:
    headers = {
        "origin": ORIGIN,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, x-stainless-os, content-type",
    }
    reply = httpx.options(secured.a + CHAT, headers=headers)
    assert reply.status_code == 204
    assert reply.headers["access-control-allow-origin"] == ORIGIN and reply.headers["vary"] == "Origin"
    allowed = [h.strip().lower() for h in reply.headers["access-control-allow-headers"].split(",")]
    assert {"authorization", "content-type", "x-stainless-os"} <= set(allowed)
    assert "access-control-allow-credentials" not in reply.headers
    odd = httpx.options(secured.a + CHAT, headers={**headers, "access-control-request-headers": "x y"})
    assert "x y" not in odd.headers["access-control-allow-headers"]
    foreign = httpx.options(secured.a + CHAT, headers={**headers, "origin": "https://evil.example"})
    assert foreign.status_code == 403
    assert "*" not in foreign.headers.get("access-control-allow-origin", "")
    assert httpx.options(secured.a + "/api/models", headers=headers).status_code == 401  # no CORS for admin


def test_a71_the_access_log_names_the_caller_never_the_key_or_query(secured: Secured) -> None:
    key = secured.key("sec-logged")
    assert (
        httpx.get(secured.a + "/v1beta/models", params={"key": key, "other": "q-secret"}).status_code == 200
    )
    assert httpx.get(secured.a + "/v1/models", headers={"authorization": f"Bearer {key}"}).status_code == 200
    path = secured.stack.home / "logs" / "gateway-0.log"

    def access_lines() -> list[dict[str, Any]]:
        log = path.read_text()
        return [json.loads(line) for line in log.splitlines() if line.startswith("{") and '"http"' in line]

    def logged() -> set[tuple[str, str, int]]:
        return {(x["method"], x["path"], x["status"]) for x in access_lines() if x.get("who") == "sec-logged"}

    # The access line is written as the reply leaves: wait for it rather than race it.
    wait_until(lambda: logged() >= {("GET", "/v1beta/models", 200), ("GET", "/v1/models", 200)},
               what="both access lines")
    log = path.read_text()
    assert key not in log and "q-secret" not in log
    lines = access_lines()
    assert any(line.get("who") == "admin" and line["path"].startswith("/api/") for line in lines)


def test_a100_status_and_the_version_header(secured: Secured) -> None:
    status = secured.admin.get("/api/status")
    data = status.json()
    assert data["gateway"] == f"http://127.0.0.1:{secured.stack.port}/v1"
    assert (data["auth"], data["keys_required"], data["scheduler"]) == (True, True, "off")
    assert data["models"] >= 2 and data["collections"] >= 2 and data["default_endpoint"] == "fake"
    assert set(data["scheduler_jobs"]) >= {"availability", "perf", "suite"}
    for reply in (
        status,
        httpx.get(secured.a + "/api/models"),
        httpx.get(secured.a + "/health"),
        httpx.get(secured.a + "/v1/models", headers={"host": "evil.example"}),
        secured.admin.get("/api/nothing"),
    ):
        assert re.fullmatch(r"\d+\.\d+\.\d+\S* \d{4}-\d{2}-\d{2}", reply.headers["x-benchwarmers-version"])


def test_a_panel_asked_with_a_key_is_recorded_under_the_keys_name(secured: Secured) -> None:
    """P-16: the call log names the caller (`key`), never the key itself."""
    auth = {"authorization": f"Bearer {secured.key('sec-recorded')}"}
    reply = httpx.post(secured.b + CHAT, json=ask(), headers=auth, timeout=60)
    assert reply.status_code == 200
    panel = reply.json()["bench"]["panel"]
    recorded = asyncio.run(_panel_events(secured.stack, panel))
    assert {e["type"]: e["key"] for e in recorded} == {"panel_seated": "sec-recorded",
                                                       "panel_answered": "sec-recorded"}


async def _panel_events(stack: Stack, panel: str) -> list[dict[str, Any]]:
    nc = await admin_bus(stack)
    try:
        sub = await nc.jetstream().subscribe(subjects.panel_subject(panel), ordered_consumer=True)
        events: list[dict[str, Any]] = []
        while len(events) < 2:
            events.append(json.loads((await sub.next_msg(timeout=10)).data))
        return events
    finally:
        await nc.close()

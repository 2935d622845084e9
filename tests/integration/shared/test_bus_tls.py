"""TLS between the services and NATS (issue 13, item 4), with a CA and certificates this test makes: a
client that trusts the CA logs in, one that does not (or speaks plain text) gets nowhere, and a whole stack
of real service processes answers a panel over the encrypted bus."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cli.stack import Stack
from shared import bus, subjects
from shared.bus_access import ADMIN
from shared.bus_credentials import CredentialsError
from shared.natsserver import NatsServer, free_port
from tests.fakes.provider import FakeProvider
from tests.integration.shared.certs import server_tls, write_ca


@pytest.fixture
def tls_nats(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(store=tmp_path / "nats", tls=server_tls(tmp_path / "tls")).start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_client_that_trusts_the_ca_logs_in_over_tls(tls_nats: NatsServer) -> None:
    assert tls_nats.url.startswith("tls://")
    nc = await bus.connect(tls_nats.url, "test-tls", tls_nats.login(ADMIN))
    try:
        assert nc.is_connected
        await bus.provision(nc.jetstream())
        info = await nc.jetstream().stream_info(subjects.EVENTS_STREAM)
        assert info.config.name == subjects.EVENTS_STREAM
    finally:
        await nc.close()


async def test_a_client_that_trusts_another_ca_is_refused(tls_nats: NatsServer, tmp_path: Path) -> None:
    stranger = dataclasses.replace(tls_nats.login(ADMIN), tls_ca=write_ca(tmp_path / "other"))
    with pytest.raises(CredentialsError, match=r"TLS to NATS at .* failed .*BENCH_NATS_TLS_CA"):
        await bus.connect(tls_nats.url, "test-wrong-ca", stranger)


async def test_plain_text_is_refused(tls_nats: NatsServer) -> None:
    plain = dataclasses.replace(tls_nats.login(ADMIN), tls_ca=None)
    with pytest.raises(CredentialsError, match=r"TLS to NATS at .* failed"):
        await bus.connect(tls_nats.url.replace("tls://", "nats://"), "test-plain", plain)


def test_a_stack_answers_a_panel_over_tls(tmp_path: Path) -> None:
    fake = FakeProvider(log_path=tmp_path / "fake.log").start()
    stack = Stack(home=tmp_path / "home", port=free_port(), tls=server_tls(tmp_path / "tls"),
                  extra_env={"BENCHWARMERS_KEY_FAKE": "sk-tls-test"})
    try:
        stack.start()
        assert stack.nats_url and stack.nats_url.startswith("tls://")
        fake.set_model("tls-m1")
        with httpx.Client(base_url=stack.url, timeout=60) as http:
            assert http.post("/api/endpoint", json={"name": "fake", "base": fake.base_url}).status_code == 200
            assert http.post("/api/models", json={"served": "tls-m1", "endpoint": "fake"}).status_code == 200
            saved = http.post("/api/collection", json={"name": "tls", "members": ["tls-m1"]})
            assert saved.status_code == 200
            reply = http.post("/v1/chat/completions", json={
                "model": "bench/tls", "messages": [{"role": "user", "content": "over tls?"}]})
        assert reply.status_code == 200, reply.text
        assert "tls-m1" in reply.text
        assert [r["headers"]["authorization"] for r in fake.requests()][-1] == "Bearer sk-tls-test"
    finally:
        stack.stop()
        fake.stop()

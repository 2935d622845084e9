"""No secret reaches what others can read (issue 13): after real panels, a route turn and a refused login on
the session stack, no bus credential (any role's nkey seed) and no provider key appears in any event, KV
entry, log line, DuckDB table or error text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from cli.stack import Stack
from shared import bus, bus_access, bus_credentials
from tests.e2e.conftest import Admin, everything_on_the_bus, ledger_dump
from tests.fakes.provider import FakeProvider

PROVIDER_KEY = "sk-test-not-a-real-key"  # the session stack's BENCHWARMERS_KEY_FAKE


def secrets_of(stack: Stack) -> dict[str, str]:
    found = {f"{role} seed": bus_credentials.seed_path(stack.credentials_folder, role).read_text().strip()
             for role in bus_access.ROLES}
    found["provider key"] = PROVIDER_KEY
    return found


def logs_text(stack: Stack) -> str:
    paths = [*(stack.home / "logs").glob("*.log")]
    if stack.nats is not None and stack.nats.log_path is not None:
        paths.append(stack.nats.log_path)
    return "\n".join(p.read_text(errors="replace") for p in paths)


async def refused_login(stack: Stack, folder: Path) -> str:
    """An impostor's attempt with a seed the server does not know: the error text it gets."""
    bus_credentials.ensure(folder, roles=("caller",))
    try:
        await bus.connect(stack.nats_url or "", "impostor", bus_credentials.BusLogin.load(folder, "caller"))
    except bus_credentials.CredentialsError as exc:
        return str(exc) + (folder / "caller.nk").read_text().strip()  # its own seed is checked too, below
    raise AssertionError("the server took a seed it does not know")


def test_no_secret_reaches_an_event_a_log_a_table_or_an_error(
    stack: Stack, provider: FakeProvider, tmp_path: Path
) -> None:
    admin = Admin(stack.url)
    provider.set_model("nowhere-m1")
    admin.model("nowhere-m1", tools=True)
    admin.collection("nowhere", ["nowhere-m1"])
    with httpx.Client(base_url=stack.url, timeout=60) as http:
        for mode in ("bench/nowhere", "bench/nowhere:route"):
            reply = http.post("/v1/chat/completions",
                              json={"model": mode, "messages": [{"role": "user", "content": "where?"}]})
            assert reply.status_code == 200, reply.text
        errors = [http.post("/v1/chat/completions", json={"model": "bench/none-such", "messages": []}).text,
                  http.post("/api/endpoint", json={"name": "x", "base": "ftp://nowhere"}).text]
    impostor = asyncio.run(refused_login(stack, tmp_path / "impostor"))
    impostor_seed = (tmp_path / "impostor" / "caller.nk").read_text().strip()
    errors.append(impostor.removesuffix(impostor_seed))

    _, tables = ledger_dump(stack)
    places = {"events and buckets": asyncio.run(everything_on_the_bus(stack)), "logs": logs_text(stack),
              "DuckDB tables": tables, "error texts": "\n".join(errors)}
    assert "nowhere-m1" in places["events and buckets"] and "nowhere-m1" in places["DuckDB tables"]
    secrets = {**secrets_of(stack), "impostor seed": impostor_seed}
    leaks = [(what, where) for what, value in secrets.items()
             for where, text in places.items() if value in text]
    assert leaks == []


@pytest.mark.parametrize("role", bus_access.SERVICES)
def test_credential_files_are_the_owners_alone(stack: Stack, role: str) -> None:
    path = bus_credentials.seed_path(stack.credentials_folder, role)
    assert path.stat().st_mode & 0o077 == 0

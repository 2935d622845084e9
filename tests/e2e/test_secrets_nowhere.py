"""No secret reaches what others can read (issue 13): after real panels, a route turn and a refused login on
the session stack, no bus credential (any role's nkey seed) and no provider key appears in any event, KV
entry, log line, DuckDB table or error text. That holds too for keys given without editing the environment
(issue 20): one typed at `bench endpoint add --key-stdin` and one got by signing in (`bench endpoint connect`
against a local fake authorization server) land in the data folder's 0600 secrets file, reach the callers
(the provider is sent them) and nothing else, the CLI's own output included."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cli.stack import Stack
from shared import bus, bus_access, bus_credentials
from tests.e2e.conftest import Admin, everything_on_the_bus, ledger_dump
from tests.fakes.authorization import FakeAuthorization
from tests.fakes.provider import FakeProvider

PROVIDER_KEY = "sk-test-not-a-real-key"  # the session stack's BENCHWARMERS_KEY_FAKE
STDIN_KEY = "sk-typed-at-the-prompt-5f4e3d2c1b0a"
SIGNED_IN_KEY = "fake-key-got-by-signing-in-9a8b7c6d"
ROOT = Path(__file__).resolve().parents[2]


def bench_popen(stack: Stack, *args: str) -> subprocess.Popen[str]:
    """This tree's `bench` for the stack's data folder and URL, with no terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHWARMERS_", "BENCH_SECRETS"))}
    env.update({"BENCHWARMERS_URL": stack.url, "BENCHWARMERS_HOME": str(stack.home)})
    return subprocess.Popen([sys.executable, "-m", "cli.main", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def key_typed(stack: Stack, provider: FakeProvider) -> str:
    proc = bench_popen(stack, "endpoint", "add", "typed-key", "--base", provider.base_url, "--key-stdin")
    out, err = proc.communicate(STDIN_KEY + "\n", timeout=120)
    assert proc.returncode == 0, err
    return out + err


def signed_in(stack: Stack, provider: FakeProvider) -> str:
    """`bench endpoint connect openrouter`, the browser played by following the printed URL."""
    auth = FakeAuthorization(SIGNED_IN_KEY).start()
    try:
        proc = bench_popen(stack, "endpoint", "connect", "openrouter", "--name", "signed-in", "--no-browser",
                           "--port", "0", "--base", provider.base_url, "--auth-url", f"{auth.url}/auth",
                           "--keys-url", f"{auth.url}/api/v1/auth/keys")
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.startswith("Sign in at: "), first
        assert httpx.get(first.removeprefix("Sign in at: ").strip(), follow_redirects=True).status_code == 200
        out, err = proc.communicate(timeout=120)
    finally:
        auth.stop()
    assert proc.returncode == 0, err
    return first + out + err


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
    provider.reset_requests()
    cli_output = key_typed(stack, provider) + signed_in(stack, provider)
    sent = [r["headers"].get("authorization", "") for r in provider.requests()]
    assert f"Bearer {STDIN_KEY}" in sent and f"Bearer {SIGNED_IN_KEY}" in sent  # they reached the callers
    secrets_path = stack.home / "secrets.env"
    assert stat.S_IMODE(secrets_path.stat().st_mode) == 0o600
    assert STDIN_KEY in secrets_path.read_text() and SIGNED_IN_KEY in secrets_path.read_text()
    impostor = asyncio.run(refused_login(stack, tmp_path / "impostor"))
    impostor_seed = (tmp_path / "impostor" / "caller.nk").read_text().strip()
    errors.append(impostor.removesuffix(impostor_seed))

    _, tables = ledger_dump(stack)
    places = {"events and buckets": asyncio.run(everything_on_the_bus(stack)), "logs": logs_text(stack),
              "DuckDB tables": tables, "error texts": "\n".join(errors), "the CLI's output": cli_output}
    assert "nowhere-m1" in places["events and buckets"] and "nowhere-m1" in places["DuckDB tables"]
    secrets = {**secrets_of(stack), "impostor seed": impostor_seed, "typed key": STDIN_KEY,
               "signed-in key": SIGNED_IN_KEY}
    leaks = [(what, where) for what, value in secrets.items()
             for where, text in places.items() if value in text]
    assert leaks == []


@pytest.mark.parametrize("role", bus_access.SERVICES)
def test_credential_files_are_the_owners_alone(stack: Stack, role: str) -> None:
    path = bus_credentials.seed_path(stack.credentials_folder, role)
    assert path.stat().st_mode & 0o077 == 0

"""The bus as an attacker meets it (issue 13): no login, a made-up login, and each service's own login used
outside its grant. The real nats-server, started with the authorization `shared.bus_access` generates."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import nats
import nats.errors
import pytest

from shared import bus, bus_access, bus_credentials, subjects
from shared.bus_credentials import BusLogin, CredentialsError
from shared.natsserver import NatsServer, free_port
from tests.unit.shared.test_bus_access import may_publish, may_subscribe

ROOT = Path(__file__).resolve().parents[3]
CALLS_PULL = f"$JS.API.CONSUMER.MSG.NEXT.{subjects.CALLS_STREAM}.{subjects.CALLERS_CONSUMER}"
FRAME = subjects.relay_subject("gateway-h-1", "tok")

# A representative subject of every kind on the bus.
PUBLISHES = [
    subjects.CONFIG, subjects.panel_subject("p1"), subjects.seat_subject("p1.member1"),
    subjects.verdict_subject("p1.member1"), subjects.usage_subject("c1"), subjects.limit_subject("c1"),
    subjects.route_subject("r1"), subjects.call_subject("p1.member1"),
    subjects.RPC_CALLER_MODELS, subjects.RPC_CALLER_ROUTE,
    subjects.RPC_SEATER_PLAN, subjects.RPC_SEATER_ROUTE,
    subjects.RPC_LEDGER_SQL, subjects.RPC_LEDGER_PACING, subjects.health_subject("gateway"),
    CALLS_PULL, f"$JS.API.CONSUMER.CREATE.{subjects.CALLS_STREAM}.{subjects.CALLERS_CONSUMER}",
    f"$JS.API.STREAM.DELETE.{subjects.EVENTS_STREAM}", f"$JS.API.STREAM.PURGE.{subjects.EVENTS_STREAM}",
    f"$JS.API.STREAM.UPDATE.{subjects.EVENTS_STREAM}",
    f"$KV.{subjects.LIMITS_BUCKET}.c1", f"$KV.{subjects.KEY_RATES_BUCKET}.k1",
    f"$KV.{subjects.REMINDERS_BUCKET}.s1.p1.member1",
    FRAME, subjects.relay_cancel_subject(FRAME),
]
SUBSCRIBES = [
    subjects.EVENTS_ALL, subjects.CONFIG, subjects.CALLS_ALL, subjects.RPC_CALLER_MODELS,
    subjects.RPC_SEATER_PLAN, f"{subjects.RPC_LEDGER_SQL.rsplit('.', 1)[0]}.*",
    "_INBOX.>", "_INBOX.gateway.>",
    "_INBOX.caller.>", subjects.relay_subject("*", "*"), subjects.relay_cancel_subject(FRAME),
    subjects.health_subject("gateway"), subjects.health_subject("caller"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    nats_server = NatsServer(store=tmp_path_factory.mktemp("hostile") / "nats").start()
    try:
        yield nats_server
    finally:
        nats_server.stop()


async def test_a_client_without_credentials_is_refused(server: NatsServer) -> None:
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(server.url, allow_reconnect=False, connect_timeout=2)


async def test_a_seed_the_server_does_not_know_is_refused(server: NatsServer, tmp_path: Path) -> None:
    bus_credentials.ensure(tmp_path, roles=("gateway",))  # a valid seed, but not the server's
    with pytest.raises(CredentialsError, match="refused the gateway credentials") as refused:
        await bus.connect(server.url, "impostor", BusLogin.load(tmp_path, "gateway"))
    assert (tmp_path / "gateway.nk").read_text().strip() not in str(refused.value)


def test_a_missing_seed_names_the_file_and_where_it_is_read_from(tmp_path: Path) -> None:
    with pytest.raises(CredentialsError) as missing:
        BusLogin.load(tmp_path, "seater")
    assert str(tmp_path / "seater.nk") in str(missing.value)
    assert "BENCH_NATS_CREDENTIALS" in str(missing.value)


def test_seeds_are_made_once_readable_by_their_owner_alone(server: NatsServer) -> None:
    folder = server.credentials_folder
    assert folder.stat().st_mode & 0o777 == 0o700
    before = {}
    for role in bus_access.ROLES:
        path = bus_credentials.seed_path(folder, role)
        assert path.stat().st_mode & 0o777 == 0o600
        before[role] = path.read_bytes()
    bus_credentials.ensure(folder)  # the next `bench up` reuses them
    assert {role: bus_credentials.seed_path(folder, role).read_bytes() for role in bus_access.ROLES} == before


SENTINEL = "nobody.may.publish.this"


async def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < end, "the server never answered"
        await asyncio.sleep(0.01)


class Refusals:
    """The permission violations the server reported to one connection."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    async def collect(self, exc: Exception) -> None:
        self.errors.append(str(exc).lower())

    def refused(self, action: str, subject: str) -> bool:
        wanted = f'permissions violation for {action} to "{subject.lower()}"'
        return any(wanted in error for error in self.errors)


async def as_role(server: NatsServer, role: str, refusals: Refusals) -> nats.NATS:
    """Log in with the role's real seed, as someone who took it would: a plain client, no helpers."""
    login = server.login(role)
    return await nats.connect(server.url, nkeys_seed_str=login.seed.decode(), error_cb=refusals.collect,
                              inbox_prefix=bus_access.inbox_prefix(role), allow_reconnect=False)


@pytest.mark.parametrize("role", [*bus_access.SERVICES, bus_access.SUPERVISOR])
async def test_each_role_is_held_to_its_grant_by_the_server(server: NatsServer, role: str) -> None:
    refusals = Refusals()
    nc = await as_role(server, role, refusals)
    try:
        for subject in PUBLISHES:
            await nc.publish(subject, b"{}")
        subs = [await nc.subscribe(subject) for subject in SUBSCRIBES]
        # The server answers in order: once the refusal of a subject nobody may use arrived, all did.
        await nc.publish(SENTINEL, b"")
        await wait_for(lambda: refusals.refused("publish", SENTINEL))
        for subject in PUBLISHES:
            assert refusals.refused("publish", subject) is not may_publish(role, subject), (role, subject)
        for subject in SUBSCRIBES:
            refused = refusals.refused("subscription", subject)
            assert refused is not may_subscribe(role, subject), (role, subject)
        assert any(refusals.refused("publish", s) for s in PUBLISHES)  # every role is refused something
        for sub in subs:
            await sub.unsubscribe()
    finally:
        await nc.close()


async def test_a_denied_subject_is_logged_once_with_the_role(server: NatsServer,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    nc = await bus.connect(server.url, "seater-test", server.login("seater"))
    out: list[str] = []

    def logged(subject: str) -> bool:
        out.extend(capsys.readouterr().out.splitlines())
        return any(subject in line for line in out)

    try:
        for _ in range(3):
            await nc.publish(subjects.CONFIG, b"{}")
        await nc.publish(SENTINEL, b"")
        await wait_for(lambda: logged(SENTINEL))
    finally:
        await nc.close()
    lines = [line for line in out if "nats_permission_denied" in line and subjects.CONFIG in line]
    assert len(lines) == 1
    assert "seater" in lines[0]


def start_service(service: str, server: NatsServer, credentials: Path,
                  home: Path) -> subprocess.CompletedProcess[str]:
    """The service's process with the given credentials folder, until it exits (it should, at once)."""
    env = {**os.environ, "NATS_URL": server.url, "BENCH_NATS_CREDENTIALS": str(credentials),
           "BENCHWARMERS_HOME": str(home), "BENCH_PORT": str(free_port())}
    return subprocess.run([sys.executable, "-m", f"services.{service}"], env=env, capture_output=True,
                          text=True, timeout=60, cwd=ROOT)


@pytest.mark.parametrize("service", bus_access.SERVICES)
def test_a_service_without_its_seed_exits_with_one_line_naming_it(
    server: NatsServer, service: str, tmp_path: Path
) -> None:
    done = start_service(service, server, tmp_path / "empty", tmp_path)
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert str(tmp_path / "empty" / f"{service}.nk") in done.stderr
    assert "BENCH_NATS_CREDENTIALS" in done.stderr


@pytest.mark.parametrize("service", ["gateway", "caller"])
def test_a_service_with_a_seed_the_server_refuses_exits_with_one_line(
    server: NatsServer, service: str, tmp_path: Path
) -> None:
    bus_credentials.ensure(tmp_path / "stale", roles=(service,))
    done = start_service(service, server, tmp_path / "stale", tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert f"refused the {service} credentials" in last and "Traceback" not in done.stderr, done.stderr


async def logs_in(server: NatsServer, role: str, seed: bytes) -> bool:
    try:
        nc = await bus.connect(server.url, f"test-{role}", BusLogin(role, seed.strip()))
    except CredentialsError:
        return False
    await nc.close()
    return True


async def test_a_rotation_accepts_both_keys_until_the_previous_seed_is_deleted(tmp_path: Path) -> None:
    """`bench bus rotate`: the server (started, like a reload, from the folder) takes the old and the new
    key; once the previous seed is deleted and the authorization made again, only the new one."""
    folder = tmp_path / "bus"
    bus_credentials.ensure(folder)
    old = tmp_path / "caller-before.nk"
    old.write_bytes(bus_credentials.seed_path(folder, "caller").read_bytes())
    previous = bus_credentials.rotate(folder, "caller")
    new = bus_credentials.seed_path(folder, "caller").read_bytes()
    assert previous.read_bytes() == old.read_bytes() != new
    with pytest.raises(CredentialsError, match="already being rotated"):
        bus_credentials.rotate(folder, "caller")
    for overlapping, old_accepted in ((True, True), (False, False)):
        if not overlapping:
            previous.unlink()
        server = NatsServer(store=tmp_path / f"nats-{overlapping}", credentials=folder).start()
        try:
            assert await logs_in(server, "caller", new)
            assert await logs_in(server, "caller", old.read_bytes()) is old_accepted
            assert await logs_in(server, "gateway", bus_credentials.seed_path(folder, "gateway").read_bytes())
        finally:
            server.stop()

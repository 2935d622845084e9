"""The local stack: an embedded NATS (unless `NATS_URL` is set) and the five services as supervised processes.

`bench up` and `make run` use it in the foreground; tests use it to start a real stack of their own.
Every child is started in its own session, stopped by PID, and killed by the kernel if the thread that
started it dies (even by `kill -9`). A child that dies unasked, NATS included, is reported and started
again, after a growing pause while it keeps dying (`cli.restarts`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nats.errors as nats_errors

from cli.forked import Zygote
from cli.restarts import Restarts
from cli.secrets_file import SECRETS_ENV, secrets_path
from shared import bus, processes
from shared.bus_access import SUPERVISOR
from shared.bus_credentials import BusLogin
from shared.natsserver import NatsServer, ServerTls, free_port
from shared.subjects import health_subject

SERVICES = ("ledger", "seater", "caller", "prober", "gateway")
# Forked from one image of their imports (`shared.zygote`); the callers' provider keys reach them through a
# pipe only they read. Linux only (the tie to the zygote's life is Linux's prctl).
FORKED = frozenset(SERVICES) if sys.platform.startswith("linux") else frozenset()


@dataclass
class Child:
    service: str
    index: int
    env: dict[str, str]
    log_path: Path
    # Forks the service from its image when set (`shared.zygote`), else a new interpreter starts it.
    zygote: Zygote | None = None
    proc: processes.Process | None = None
    restarts: int = 0
    backoff: Restarts = field(default_factory=Restarts)

    @property
    def name(self) -> str:
        return f"{self.service}-{self.index}"

    def start(self) -> None:
        """Spawn the service; it dies with the calling thread, so start it from the supervisor's main one."""
        command = processes.service_command(self.service)
        if self.zygote is not None:
            public, private = split_secrets(self.env)
            self.proc = self.zygote.spawn(command, public, self.log_path, private=private)
        else:
            self.proc = processes.spawn(command, self.log_path, env=self.env, die_with_parent=True)
        self.backoff.started(time.monotonic())

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        processes.send(self.proc, sig)

    def stop(self, timeout: float = 10.0) -> None:
        processes.stop(self.proc, timeout)


PROVIDER_SECRETS = ("BENCHWARMERS_KEY_", "BENCH_SECRETS_PATH")


def env_for(service: str, base: Mapping[str, str]) -> dict[str, str]:
    """A child's environment: provider keys reach the callers only (invariant 5), never the gateway,
    the seater, the ledger or the prober, even when they are exported in the shell that runs `bench up`."""
    return dict(base) if service == "caller" else split_secrets(base)[0]


def split_secrets(env: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """An environment without its provider secrets, and those secrets (for a pipe of their own)."""
    public: dict[str, str] = {}
    private: dict[str, str] = {}
    for name, value in env.items():
        (private if name.startswith(PROVIDER_SECRETS) else public)[name] = value
    return public, private


@dataclass
class Stack:
    """NATS plus services. `replicas` maps a service to how many processes of it to run.

    Every process logs in to NATS with its own role's seed from `credentials` (by default
    `<home>/bus`, made by the embedded server when missing); with an external `nats_url` the folder must
    hold the seeds that server's authorization was made from."""

    home: Path
    port: int = 8122
    nats_url: str | None = None
    credentials: Path | None = None
    tls: ServerTls | None = None
    replicas: Mapping[str, int] = field(default_factory=dict)
    extra_env: Mapping[str, str] = field(default_factory=dict)
    gateway_ports: list[int] = field(default_factory=list)
    children: list[Child] = field(default_factory=list)
    nats: NatsServer | None = None
    nats_backoff: Restarts = field(default_factory=Restarts)
    # False: every service starts in an interpreter of its own, as in a container (BENCH_FORK_SERVICES).
    fork_services: bool = True
    zygote: Zygote | None = None

    def start(self, timeout: float = 60.0) -> Stack:
        """Start everything and wait until it answers; on any failure stop what did start, then raise."""
        try:
            return self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout: float) -> Stack:
        self.home.mkdir(parents=True, exist_ok=True)
        if not self.nats_url:
            self.nats = NatsServer(store=self.home / "nats", credentials=self.credentials_folder,
                                   tls=self.tls, die_with_parent=True).start()
            self.nats_backoff.started(time.monotonic())
            self.nats_url = self.nats.url
        else:
            nats_answers(self.nats_url)
        for role in (SUPERVISOR, *(service for service in SERVICES if self.replicas.get(service, 1))):
            self.login(role)  # a missing or unreadable seed stops the start here, before any service runs
        base_env = dict(os.environ)
        base_env.update(self.extra_env)
        base_env.update({"NATS_URL": self.nats_url, "BENCHWARMERS_HOME": str(self.home),
                         "BENCH_NATS_CREDENTIALS": str(self.credentials_folder)})
        # Keys typed at `bench endpoint add --key-stdin` or got by a sign-in: for the callers alone (env_for).
        base_env[SECRETS_ENV] = str(secrets_path(self.home, base_env))
        if self.tls is not None:
            base_env["BENCH_NATS_TLS_CA"] = str(self.tls.ca)
        base_env.setdefault("PYTHONUNBUFFERED", "1")
        # glibc gives every thread that allocates an arena of its own, and keeps what it freed there: the
        # ledger's DuckDB and worker threads grew by tens of MB that way. Two arenas cost nothing here.
        base_env.setdefault("MALLOC_ARENA_MAX", "2")
        logs = self.home / "logs"
        if self.fork_services and FORKED:
            self.zygote = Zygote(env_for("zygote", base_env), logs / "zygote.log")
            self.zygote.start()
        for service in SERVICES:
            for index in range(self.replicas.get(service, 1)):
                env = env_for(service, base_env)
                if service == "gateway":
                    # Further replicas take free ports of their own: the port after ours may be taken.
                    port = free_port() if index else self.port
                    env["BENCH_PORT"] = str(port)
                    self.gateway_ports.append(port)
                zygote = self.zygote if service in FORKED else None
                child = Child(service, index, env, logs / f"{service}-{index}.log", zygote)
                child.start()
                self.children.append(child)
        self.wait_ready(timeout)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def credentials_folder(self) -> Path:
        return self.credentials or self.home / "bus"

    def login(self, role: str) -> BusLogin:
        """A role's login to this stack's bus (the supervisor's own, or `admin` for a test's look)."""
        return BusLogin.load(self.credentials_folder, role, self.tls.ca if self.tls else None)

    def wait_ready(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        asyncio.run(self._wait_bus_services(end))
        for port in self.gateway_ports:
            while True:
                self._check_children()
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as resp:
                        if json.loads(resp.read()).get("ok"):
                            break
                except OSError:
                    pass
                if time.monotonic() > end:
                    raise RuntimeError(f"gateway on {port} not ready; see {self.home / 'logs'}")
                time.sleep(0.05)

    async def _wait_bus_services(self, end: float) -> None:
        """Until every replica of every bus service has answered a health ping (each names its instance)."""
        assert self.nats_url
        try:
            nc = await asyncio.wait_for(bus.connect(self.nats_url, "bench-up", self.login(SUPERVISOR)),
                                        max(1.0, end - time.monotonic()))
        except TimeoutError:
            raise RuntimeError(f"NATS at {self.nats_url} took no connection in time") from None
        try:
            for service in SERVICES:
                wanted = self.replicas.get(service, 1)
                if service == "gateway" or not wanted:
                    continue
                answered: set[str] = set()
                inbox = await nc.subscribe(nc.new_inbox())
                while len(answered) < wanted:
                    self._check_children()
                    await nc.publish(health_subject(service), b"", reply=inbox.subject)
                    with contextlib.suppress(asyncio.TimeoutError, nats_errors.TimeoutError):
                        while len(answered) < wanted:
                            reply = await inbox.next_msg(timeout=0.5)
                            if reply.data:  # not NATS's empty "no responders" status
                                answered.add(json.loads(reply.data).get("instance", ""))
                    if len(answered) < wanted and time.monotonic() > end:
                        logs = self.home / "logs"
                        raise RuntimeError(f"{service}: {len(answered)} of {wanted} ready; see {logs}")
                await inbox.unsubscribe()
        finally:
            await nc.close()

    def _check_children(self) -> None:
        for child in self.children:
            if child.proc is not None and child.proc.poll() is not None:
                raise ChildExited(child.name, child.proc.returncode, child.log_path)

    def find(self, service: str, index: int = 0) -> Child:
        return next(c for c in self.children if c.service == service and c.index == index)

    def supervise_once(self) -> list[str]:
        """Start again every child that died unasked, NATS on its own port and store (the services
        reconnect by themselves); returns what it did, one line each."""
        now = time.monotonic()
        said = []
        if self.nats is not None:
            nats, log = self.nats, self.nats.log_path
            said += tend("nats-server", nats.proc, self.nats_backoff, nats.launch, log, now,
                         f" on {nats.url} with its store {nats.store}")
        for child in self.children:
            said += tend(child.name, child.proc, child.backoff, child.start, child.log_path, now)
        return said

    def stop(self) -> None:
        # The gateway first (no new work), the ledger last (it folds what the others published).
        for child in sorted(self.children, key=lambda c: SERVICES.index(c.service), reverse=True):
            child.stop()
        if self.zygote is not None:
            self.zygote.stop()
        if self.nats is not None:
            self.nats.stop()


def nats_answers(url: str, timeout: float = 3.0) -> None:
    """An external NATS must at least take a TCP connection before anything starts (services would wait on
    it forever); raises `RuntimeError` naming NATS_URL otherwise."""
    problems = []
    for server in url.split(","):
        parts = urllib.parse.urlsplit(server.strip() if "://" in server else f"nats://{server.strip()}")
        try:
            with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 4222), timeout):
                return
        except (OSError, ValueError) as exc:
            problems.append(f"{parts.hostname}:{parts.port or 4222}: {getattr(exc, 'strerror', None) or exc}")
    raise RuntimeError(f"NATS_URL {url}: nothing answers ({'; '.join(problems)})")


class ChildExited(RuntimeError):
    """A service ended while the stack was starting: `summary` is one line (its log's last), the message
    also carries the log's tail for a test's report."""

    def __init__(self, name: str, code: int | None, log_path: Path) -> None:
        text = log_path.read_text(errors="replace") if log_path.exists() else ""
        lines = [line for line in text.splitlines() if line.strip()]
        last = lines[-1] if lines else "no output"
        self.summary = f"{name} exited with {code}: {last} (its log: {log_path})"
        super().__init__(f"{self.summary}\n{text[-3000:]}")


def tend(name: str, proc: processes.Process | None, backoff: Restarts, launch: Callable[[], None],
         log: Path | None, now: float, where: str = "") -> list[str]:
    """One supervised process: start it again if it died (at once, or once its pause is over)."""
    if backoff.waiting():
        if not backoff.due(now):
            return []
        launch()
        backoff.started(now)
        return [f"{name}: started it again{where}"]
    code = None if proc is None else proc.poll()
    if code is None:
        return []
    pause = backoff.died(now)
    if pause:
        return [f"{name} (exit {code}) died again soon after its start; starting it again in {pause:g}s "
                f"(its log: {log})"]
    launch()
    backoff.started(now)
    return [f"{name} (exit {code}) died; restarted it{where} (its log: {log})"]

"""The local stack: an embedded NATS (unless `NATS_URL` is set) and the five services as supervised processes.

`bench up` and `make run` use it in the foreground; tests use it to start a real stack of their own.
Every child is started in its own session and stopped by PID; a child that dies unasked is reported and
restarted.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shared import bus, processes
from shared.bus_access import SUPERVISOR
from shared.bus_credentials import BusLogin
from shared.natsserver import NatsServer, ServerTls, free_port
from shared.subjects import health_subject

SERVICES = ("ledger", "seater", "caller", "prober", "gateway")


@dataclass
class Child:
    service: str
    index: int
    env: dict[str, str]
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    restarts: int = 0

    @property
    def name(self) -> str:
        return f"{self.service}-{self.index}"

    def start(self) -> None:
        self.proc = processes.spawn([sys.executable, "-m", f"services.{self.service}"], self.log_path,
                                    env=self.env)

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
    if service == "caller":
        return dict(base)
    return {name: value for name, value in base.items() if not name.startswith(PROVIDER_SECRETS)}


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
                                   tls=self.tls).start()
            self.nats_url = self.nats.url
        base_env = dict(os.environ)
        base_env.update(self.extra_env)
        base_env.update({"NATS_URL": self.nats_url, "BENCHWARMERS_HOME": str(self.home),
                         "BENCH_NATS_CREDENTIALS": str(self.credentials_folder)})
        if self.tls is not None:
            base_env["BENCH_NATS_TLS_CA"] = str(self.tls.ca)
        base_env.setdefault("PYTHONUNBUFFERED", "1")
        for service in SERVICES:
            for index in range(self.replicas.get(service, 1)):
                env = env_for(service, base_env)
                if service == "gateway":
                    # Further replicas take free ports of their own: the port after ours may be taken.
                    port = free_port() if index else self.port
                    env["BENCH_PORT"] = str(port)
                    self.gateway_ports.append(port)
                child = Child(service, index, env, self.home / "logs" / f"{service}-{index}.log")
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
        assert self.nats_url
        nc = await bus.connect(self.nats_url, "bench-up", self.login(SUPERVISOR))
        try:
            for service in SERVICES:
                if service == "gateway" or not self.replicas.get(service, 1):
                    continue
                while True:
                    self._check_children()
                    try:
                        await nc.request(health_subject(service), b"", timeout=0.5)
                        break
                    except Exception:
                        if time.monotonic() > end:
                            raise RuntimeError(f"{service} not ready; see {self.home / 'logs'}") from None
        finally:
            await nc.close()

    def _check_children(self) -> None:
        for child in self.children:
            if child.proc is not None and child.proc.poll() is not None:
                tail = child.log_path.read_text(errors="replace")[-3000:] if child.log_path.exists() else ""
                raise RuntimeError(f"{child.name} exited with {child.proc.returncode}:\n{tail}")

    def find(self, service: str, index: int = 0) -> Child:
        return next(c for c in self.children if c.service == service and c.index == index)

    def supervise_once(self) -> list[str]:
        """Restart every child that died unasked; returns the names restarted."""
        restarted = []
        for child in self.children:
            if child.proc is not None and child.proc.poll() is not None:
                code = child.proc.returncode
                child.restarts += 1
                child.start()
                restarted.append(f"{child.name} (exit {code})")
        return restarted

    def stop(self) -> None:
        # The gateway first (no new work), the ledger last (it folds what the others published).
        for child in sorted(self.children, key=lambda c: SERVICES.index(c.service), reverse=True):
            child.stop()
        if self.nats is not None:
            self.nats.stop()

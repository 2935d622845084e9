"""Every process's operations port: `GET /healthz` (alive: the event loop answers), `GET /readyz` (ready:
200, or 503 with each problem named) and `GET /metrics` (Prometheus text).

A tiny HTTP/1.1 server on asyncio's own streams: three read-only routes need no framework, and the gateway's
request path is not touched by an orchestrator's probes. Readiness is a set of named checks a service adds
as it starts (bus connected, projections caught up, streams as configured); each returns its problem, or
None when all is well.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

log = structlog.get_logger("ops")

Check = Callable[[], str | None]
REQUEST_LIMIT = 8_192  # a probe's request line and headers; anything longer is not a probe
READ_TIMEOUT_S = 5.0


class Readiness:
    def __init__(self) -> None:
        self.checks: dict[str, Check] = {}

    def add(self, name: str, check: Check) -> None:
        self.checks[name] = check

    def problems(self) -> list[str]:
        found = []
        for name, check in self.checks.items():
            try:
                problem = check()
            except Exception as exc:  # a check that fails is a problem, never a crash of the port
                problem = f"the check failed ({type(exc).__name__})"
            if problem:
                found.append(f"{name}: {problem}")
        return found


def response(status: int, body: bytes, content_type: str) -> bytes:
    reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}[status]
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n")
    if status == 405:
        head += "Allow: GET, HEAD\r\n"
    return (head + "\r\n").encode() + body


def answer(method: str, path: str, readiness: Readiness) -> bytes:
    """The whole HTTP response to one request line."""
    if path not in ("/healthz", "/readyz", "/metrics"):
        return response(404, b'{"error": "not found: /healthz, /readyz and /metrics are served here"}',
                        "application/json")
    if method not in ("GET", "HEAD"):
        return response(405, b'{"error": "only GET"}', "application/json")
    if path == "/metrics":
        return response(200, generate_latest(), CONTENT_TYPE_LATEST)
    if path == "/healthz":
        return response(200, b'{"alive": true}', "application/json")
    problems = readiness.problems()
    body = json.dumps({"ready": not problems, "problems": problems}).encode()
    return response(503 if problems else 200, body, "application/json")


class OpsServer:
    def __init__(self, readiness: Readiness) -> None:
        self.readiness = readiness
        self._server: asyncio.Server | None = None

    async def start(self, bind: str, port: int) -> OpsServer:
        self._server = await asyncio.start_server(self._serve, bind, port, limit=REQUEST_LIMIT)
        log.info("ops_listening", bind=bind, port=self.port)
        return self

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                head = await reader.readuntil(b"\r\n\r\n")
            parts = head.split(b"\r\n", 1)[0].decode("latin-1").split()
            if len(parts) == 3:
                method, target = parts[0], parts[1].split("?", 1)[0]
                out = answer(method, target, self.readiness)
                writer.write(out.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n" if method == "HEAD" else out)
                await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

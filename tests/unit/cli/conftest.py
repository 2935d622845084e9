"""Run `bench` in-process with a server that answers through `httpx.MockTransport` and records requests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from cli.main import app
from cli.session import Session

Handler = Callable[[httpx.Request], httpx.Response]


@dataclass
class FakeServer:
    """Answers each (method, path) from a table; anything else is FastAPI's bare 404."""

    routes: dict[tuple[str, str], httpx.Response] = field(default_factory=dict)
    seen: list[httpx.Request] = field(default_factory=list)

    def answer(self, method: str, path: str, status: int = 200, body: Any = None) -> None:
        self.routes[(method, path)] = httpx.Response(status, json=body)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        return self.routes.get(
            (request.method, request.url.path), httpx.Response(404, json={"detail": "Not Found"})
        )

    def body(self, index: int = -1) -> Any:
        return json.loads(self.seen[index].content)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BENCHWARMERS_URL", "BENCHWARMERS_ADMIN_TOKEN", "BENCHWARMERS_KEY", "BENCHWARMERS_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


@pytest.fixture
def bench(server: FakeServer) -> Iterator[Callable[..., Result]]:
    runner = CliRunner()

    def invoke(*args: str, env: dict[str, str] | None = None, handler: Handler | None = None,
               stdin: str | None = None) -> Result:
        transport = httpx.MockTransport(handler or server.handle)
        return runner.invoke(app, list(args), obj=Session(transport=transport), env=env, input=stdin)

    yield invoke

"""What every client command shares for one run: the server URL, the secrets, `--json`, the transport."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import typer

from cli.client import BenchClient, Reply
from cli.settings import DEFAULT_URL


@dataclass
class Session:
    url: str = DEFAULT_URL
    json: bool = False
    admin_token: str | None = None
    key: str | None = None
    timeout_s: float = 900.0
    # Tests put an `httpx.MockTransport` here (CliRunner's `obj=`); None means the network.
    transport: httpx.BaseTransport | None = None

    def client(self) -> BenchClient:
        return BenchClient(
            self.url, admin_token=self.admin_token, key=self.key, timeout_s=self.timeout_s,
            transport=self.transport,
        )

    def emit(self, reply: Reply, human: Callable[[Any], None]) -> None:
        """The server's reply verbatim with `--json`, else the human rendering of it."""
        if self.json:
            typer.echo(reply.text.rstrip("\n"))
        else:
            human(reply.data)


def session(ctx: typer.Context) -> Session:
    found = ctx.find_object(Session)
    if found is None:  # pragma: no cover - the root callback always makes one
        raise RuntimeError("no session: commands run under the `bench` root")
    return found

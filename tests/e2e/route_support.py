"""Route mode's e2e rig: a stack of its own whose first-piece window and grace are short (so failover is
seen within a test's patience), the fake provider behind it, and collections of models it plays.

The grace is longer than the window: a member silent for its window and then replaced still lets the turn
keep its status and name its member before the 200.
"""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from cli.stack import Stack
from shared import subjects
from shared.events import decode_event
from shared.natsserver import free_port
from tests.e2e.conftest import Admin, admin_bus, running
from tests.fakes.provider import FakeProvider

FIRST_PIECE_S = 2.0
GRACE_S = 4.0
KEEPALIVE_S = 0.5
SYSTEM = "You are a careful coding agent. (route e2e system prompt)"


def free_ports(count: int) -> int:
    """A port such that it and the `count - 1` after it are free (the stack gives replica i port + i)."""
    while True:
        first = free_port()
        sockets = []
        try:
            for port in range(first, first + count):
                probe = socket.socket()
                sockets.append(probe)
                probe.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
        finally:
            for probe in sockets:
                probe.close()


@contextmanager
def route_stack(home: Path, provider: FakeProvider, gateways: int = 1) -> Iterator[Stack]:
    stack = Stack(
        home=home, port=free_ports(gateways), replicas={"gateway": gateways, "prober": 0},
        extra_env={"BENCHWARMERS_KEY_FAKE": "sk-test-not-a-real-key", "BENCH_KEEPALIVE_S": str(KEEPALIVE_S),
                   "BENCH_ROUTE_FIRST_PIECE_S": str(FIRST_PIECE_S), "BENCH_ROUTE_GRACE_S": str(GRACE_S)},
    )
    with running(stack):
        Admin(stack.url).endpoint("fake", provider.base_url)
        yield stack


@dataclass
class Bench:
    """Collections of fresh models on the fake provider, one behaviour each."""

    admin: Admin
    provider: FakeProvider

    def members(self, *behaviours: str, **model: Any) -> tuple[str, list[str]]:
        """A new route collection `bench/<name>` whose members m1, m2… play `behaviours` in that order.

        Fresh members rank in their order on a conversation's first turn; later new conversations may
        put the stalest member first (RM-3's exploration, one turn in twenty with the default ranking), so a
        test that asks the same collection for several conversations must not depend on which member
        answers."""
        name = f"r{uuid.uuid4().hex[:6]}"
        aliases = [f"{name}-m{i}" for i in range(1, len(behaviours) + 1)]
        for alias, behaviour in zip(aliases, behaviours, strict=True):
            self.provider.set_model(alias, behaviour)
            self.admin.model(alias, alias=alias, **{"tools": True, **model})
        self.admin.collection(name, aliases, reply="route")
        return name, aliases

    def sent_to(self, alias: str) -> list[dict[str, Any]]:
        """The bodies the fake provider received for `alias`'s served model, oldest first."""
        return [r["body"] for r in self.provider.requests() if r["model"] == alias]


def sse_data(raw: str) -> list[Any]:
    """The `data:` payloads of an SSE body (JSON, or the `[DONE]` string); comments left out."""
    out: list[Any] = []
    for block in raw.split("\n\n"):
        data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
        if data:
            text = "\n".join(data)
            out.append(text if text == "[DONE]" else json.loads(text))
    return out


def stream_raw(url: str, path: str, body: dict[str, Any]) -> tuple[httpx.Response, str]:
    with httpx.Client(base_url=url, timeout=60) as http, http.stream("POST", path, json=body) as resp:
        return resp, "".join(resp.iter_text())


def stream_events(stack: Stack, subject: str) -> list[Any]:
    """Every event the stream holds on `subject` (a wildcard is fine), oldest first: the source of truth."""

    async def read() -> list[Any]:
        nc = await admin_bus(stack)
        try:
            js = nc.jetstream()
            sub = await js.subscribe(subject, ordered_consumer=True, stream=subjects.EVENTS_STREAM)
            found: list[Any] = []
            while True:
                try:
                    msg = await sub.next_msg(timeout=0.5)
                except TimeoutError:
                    return found
                found.append(decode_event(msg.data))
        finally:
            await nc.close()

    return asyncio.run(read())

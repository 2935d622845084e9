"""An error after the 200 (S-2, S-5, A-30) in every format, on a real gateway process and a real NATS.

The seater is played by the test: it holds each plan until the client has its 200 (sent after the grace,
since nothing was seated), then refuses. The refusal can no longer be a status, so it must arrive as the
format's own error event, and the stream must end there."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from shared import bus, subjects
from shared.commands import Plan, PlanRefusal
from shared.events import CollectionSaved, EndpointSaved, ModelRegistered
from shared.natsserver import NatsServer, free_port

WHY = "collection 'core' has no members and no explorer could be seated"
PROMPT = [{"role": "user", "content": "hello"}]
GEMINI = {"contents": [{"parts": [{"text": "hello"}]}]}


@pytest.fixture
def gateway(nats_server: NatsServer, tmp_path: Path) -> Iterator[Stack]:
    """The gateway alone, with a grace of 0.2 s and keep-alives every 0.1 s."""

    async def configure() -> None:
        nc = await bus.connect(nats_server.url, "test-config", nats_server.login("admin"))
        js = nc.jetstream()
        await bus.provision(js)
        await bus.publish_event(js, EndpointSaved(id="cfg:e", name="fake", base="http://127.0.0.1:9/v1"))
        await bus.publish_event(js, ModelRegistered(id="cfg:m", alias="m1", served="m1", endpoint="fake"))
        await bus.publish_event(js, CollectionSaved(id="cfg:c", name="core", members=["m1"]))
        await nc.close()

    asyncio.run(configure())
    stack = Stack(
        home=tmp_path / "home",
        port=free_port(),
        nats_url=nats_server.url,
        credentials=nats_server.credentials_folder,
        replicas={"ledger": 0, "seater": 0, "caller": 0, "prober": 0},
        extra_env={"BENCH_STREAM_GRACE_S": "0.2", "BENCH_KEEPALIVE_S": "0.1"},
    )
    try:
        yield stack.start()
    finally:
        stack.stop()


class HeldSeater:
    """Answers each plan with a 503 refusal, but only once the test lets it."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.asked = asyncio.Event()

    async def on_plan(self, msg: Any) -> None:
        self.asked.set()
        await self.go.wait()
        self.go.clear()
        await msg.respond(Plan(refusal=PlanRefusal(status=503, message=WHY)).model_dump_json().encode())


@pytest.fixture
async def seater(nc: bus.NATS) -> AsyncIterator[HeldSeater]:
    held = HeldSeater()
    sub = await nc.subscribe(subjects.RPC_SEATER_PLAN, cb=held.on_plan)
    try:
        yield held
    finally:
        await sub.unsubscribe()


async def stream_then_fail(url: str, seater: HeldSeater, path: str, body: dict[str, Any]) -> tuple[int, str]:
    """The status, then everything the stream carried once the seater refused after the 200."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        async with http.stream("POST", path, json=body) as reply:
            assert seater.asked.is_set()  # the 200 came while the plan was still being made
            seater.asked.clear()
            seater.go.set()
            raw = b"".join([chunk async for chunk in reply.aiter_bytes()])
    return reply.status_code, raw.decode()


def frames(raw: str) -> list[tuple[str | None, str]]:
    out = []
    for block in raw.split("\n\n"):
        if block and not block.startswith(":"):
            lines = block.split("\n")
            name = lines[0][len("event: ") :] if lines[0].startswith("event: ") else None
            out.append((name, lines[-1][len("data: ") :]))
    return out


async def test_a30_an_error_after_the_200_is_the_formats_error_event(
    gateway: Stack, seater: HeldSeater
) -> None:
    url = gateway.url

    status, raw = await stream_then_fail(
        url, seater, "/v1/chat/completions", {"model": "bench/core", "stream": True, "messages": PROMPT}
    )
    assert status == 200 and raw.startswith("data: ")
    assert frames(raw)[-2:] == [
        (None, json.dumps({"error": {"message": WHY, "type": "bench_gateway", "code": 503}})),
        (None, "[DONE]"),
    ]

    status, raw = await stream_then_fail(
        url, seater, "/v1/completions", {"model": "bench/core", "stream": True, "prompt": "hello"}
    )
    assert status == 200 and json.loads(frames(raw)[-2][1])["error"]["code"] == 503

    status, raw = await stream_then_fail(
        url, seater, "/v1/responses", {"model": "bench/core", "stream": True, "input": "hello"}
    )
    events = frames(raw)
    assert [name for name, _ in events[-2:]] == ["error", "response.failed"]
    error, failed = (json.loads(data) for _, data in events[-2:])
    assert (error["code"], error["message"]) == ("503", WHY)
    assert failed["response"]["status"] == "failed" and failed["response"]["error"]["code"] == "server_error"
    assert [json.loads(d)["sequence_number"] for _, d in events] == list(range(len(events)))

    status, raw = await stream_then_fail(
        url,
        seater,
        "/v1/messages",
        {"model": "bench/core", "stream": True, "max_tokens": 5, "messages": PROMPT},
    )
    events = frames(raw)
    assert events[0][0] == "message_start" and events[-1][0] == "error"
    assert json.loads(events[-1][1]) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": WHY},
    }

    status, raw = await stream_then_fail(
        url, seater, "/api/chat", {"model": "bench/core", "messages": PROMPT}
    )
    lines = [json.loads(line) for line in raw.splitlines()]
    assert status == 200 and lines[-1] == {"error": WHY} and lines[0]["done"] is False

    status, raw = await stream_then_fail(
        url, seater, "/v1beta/models/bench/core:streamGenerateContent?alt=sse", GEMINI
    )
    assert json.loads(frames(raw)[-1][1]) == {"error": {"code": 503, "message": WHY, "status": "UNAVAILABLE"}}

    status, raw = await stream_then_fail(
        url, seater, "/v1beta/models/bench/core:streamGenerateContent", GEMINI
    )
    elements = json.loads(raw)
    assert status == 200 and elements[-1] == {"error": {"code": 503, "message": WHY, "status": "UNAVAILABLE"}}
    assert elements[0]["candidates"][0]["content"]["parts"] == [
        {"text": ""}
    ]  # the keep-alive after the grace


async def test_a_refusal_before_the_grace_keeps_its_status(gateway: Stack, seater: HeldSeater) -> None:
    seater.go.set()  # answered at once: the refusal is known before any 200
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        reply = await http.post(
            "/v1/messages", json={"model": "bench/core", "stream": True, "max_tokens": 5, "messages": PROMPT}
        )
    assert reply.status_code == 503
    assert reply.json() == {"type": "error", "error": {"type": "overloaded_error", "message": WHY}}

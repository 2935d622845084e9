"""The caller's HTTP transport, alone: CPU and wall time of one streamed provider request, against the
fake provider on loopback, beside a bare asyncio protocol with the same parser (the floor of any client).

Each request is timed as the caller makes it (an `httpx.Request` built, sent through the transport seam,
its body read to the end and closed), one at a time on one kept-alive connection; medians of the last
1,300 of 1,500, two rounds interleaved.

    python -m benchmarks.http_transport
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any

import httptools
import httpx
import uvloop

from services.caller.upstream import make_transport
from tests.fakes.provider import FakeProvider

BODY = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}).encode()
REQUESTS, WARM = 1500, 200
Timings = tuple[list[float], list[float]]  # CPU seconds, wall seconds, per request


class Bare(asyncio.Protocol):
    """The floor: the request written whole, the reply parsed by httptools, nothing else."""

    def __init__(self) -> None:
        self.done: asyncio.Future[None] | None = None
        self.parser = httptools.HttpResponseParser(self)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_message_complete(self) -> None:
        if self.done is not None:
            self.done.set_result(None)


async def bare(port: int) -> Timings:
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(Bare, "127.0.0.1", port)
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nAuthorization: Bearer sk-bench\r\n"
            f"Content-Length: {len(BODY)}\r\n\r\n").encode()
    cpu, wall = [], []
    for _ in range(REQUESTS):
        protocol.done = loop.create_future()
        started, clock = time.process_time(), time.perf_counter()
        protocol.transport.write(head + BODY)  # type: ignore[attr-defined]
        await protocol.done
        cpu.append(time.process_time() - started)
        wall.append(time.perf_counter() - clock)
    protocol.transport.close()
    return cpu, wall


async def caller_transport(port: int) -> Timings:
    transport = make_transport(16)
    url = httpx.URL(f"http://127.0.0.1:{port}/v1/chat/completions")
    headers = {"Authorization": "Bearer sk-bench", "Content-Type": "application/json"}
    cpu, wall = [], []
    for _ in range(REQUESTS):
        started, clock = time.process_time(), time.perf_counter()
        request = httpx.Request("POST", url, content=BODY, headers=headers)
        response = await transport.handle_async_request(request)
        async for _ in response.aiter_raw():
            pass
        await response.aclose()
        cpu.append(time.process_time() - started)
        wall.append(time.perf_counter() - clock)
    await transport.aclose()
    return cpu, wall


def main() -> None:
    provider = FakeProvider().start()
    runs: dict[str, list[Timings]] = {"bare protocol (floor)": [], "the caller's transport": []}
    clients: dict[str, Callable[[int], Coroutine[Any, Any, Timings]]] = {"bare protocol (floor)": bare,
                                                              "the caller's transport": caller_transport}
    try:
        provider.set_model("m")
        for _ in range(2):
            for name, client in clients.items():
                runs[name].append(uvloop.run(client(provider.port)))
    finally:
        provider.stop()
    medians: dict[str, tuple[float, float]] = {}
    for name, rounds in runs.items():
        cpus = [c for timings in rounds for c in timings[0][WARM:]]
        walls = [w for timings in rounds for w in timings[1][WARM:]]
        medians[name] = (statistics.median(cpus) * 1e6, statistics.median(walls) * 1e6)
        print(f"{name:24s} CPU p50 {medians[name][0]:6.0f} µs   wall p50 {medians[name][1]:6.0f} µs")
    (floor_cpu, floor_wall), (cpu, wall) = medians.values()
    print(f"the caller's transport over the floor: CPU {cpu / floor_cpu:.2f}x (+{cpu - floor_cpu:.0f} µs), "
          f"wall {wall / floor_wall:.2f}x (+{wall - floor_wall:.0f} µs)")


if __name__ == "__main__":
    main()

"""The floor of route mode's design: the same hops with nothing of the product on them.

A route turn crosses client → gateway (HTTP) → NATS → caller → provider (HTTP) and back. This module runs
those hops bare (a raw ASGI app on uvicorn that publishes the body and relays what comes back; a NATS
queue subscriber that streams the provider's lines to the reply subject), on the same event loops, so
`make bench` can show how much of route mode's overhead is the design (hops, processes, the machine) and
how much is the product's own work. It is a yardstick, not a product path: no keys, limits, ledger or
failover.

    python -m benchmarks.floor            # the floor alone, against the fake provider (about 1 minute)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

SUBJECT = "floor.route"
END = b""  # an empty message ends a reply
READY = "floor caller subscribed"

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def caller(nats_url: str, provider_url: str) -> None:
    """Each request on `floor.route`: the body POSTed to the provider, each `data:` line to the reply."""
    import aiohttp
    import nats

    nc = await nats.connect(nats_url)
    session = aiohttp.ClientSession()
    headers = {"Content-Type": "application/json"}

    async def relay(body: bytes, reply: str) -> None:
        async with session.post(provider_url, data=body, headers=headers) as resp:
            rest = b""
            async for chunk in resp.content.iter_any():
                *lines, rest = (rest + chunk).split(b"\n")
                for line in lines:
                    if line.startswith(b"data:"):
                        await nc.publish(reply, line + b"\n\n")
        await nc.publish(reply, END)

    tasks: set[asyncio.Task[None]] = set()

    async def on_request(msg: Any) -> None:
        task = asyncio.create_task(relay(msg.data, msg.reply))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    await nc.subscribe(SUBJECT, queue="floor", cb=on_request)
    await nc.flush()
    print(READY, flush=True)
    await asyncio.Event().wait()


async def lifespan(nats_url: str, conn: list[Any], receive: Receive, send: Send) -> None:
    """A bare app's lifespan: its NATS connection made at startup, into `conn`."""
    import nats

    while (await receive())["type"] != "lifespan.shutdown":
        conn.append(await nats.connect(nats_url))
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


def gateway_app(nats_url: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The bare gateway: the body out on `floor.route`, the reply's messages back as the response body."""
    conn: list[Any] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(nats_url, conn, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        nc = conn[0]
        inbox = nc.new_inbox()
        replies: asyncio.Queue[bytes] = asyncio.Queue()

        async def on_reply(msg: Any) -> None:
            replies.put_nowait(msg.data)

        sub = await nc.subscribe(inbox, cb=on_reply)
        await nc.publish(SUBJECT, body, reply=inbox)
        started = False
        while (data := await replies.get()) != END:
            if not started:
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"text/event-stream")]})
                started = True
            await send({"type": "http.response.body", "body": data, "more_body": True})
        await sub.unsubscribe()
        if not started:
            await send({"type": "http.response.start", "status": 502, "headers": []})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


@contextlib.contextmanager
def floor_path(provider_url: str) -> Iterator[str]:
    """A bare NATS server, floor caller and floor gateway, stopped by PID on the way out; yields the URL."""
    from shared.natsserver import free_port, nats_server_binary

    nats_port, http_port = free_port(), free_port()
    nats_url = f"nats://127.0.0.1:{nats_port}"
    me = [sys.executable, "-m", "benchmarks.floor"]
    with tempfile.TemporaryDirectory(prefix="floor-") as logs:
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for cmd in ([nats_server_binary(), "-a", "127.0.0.1", "-p", str(nats_port)],
                        [*me, "caller", nats_url, provider_url],
                        [*me, "gateway", nats_url, str(http_port)]):
                log = Path(logs) / f"{len(procs)}.log"
                with open(log, "wb") as out:
                    procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT))
                if len(procs) == 1:
                    wait_for(lambda: port_open(nats_port), f"nats-server on port {nats_port}")
                elif len(procs) == 2:  # a request before the caller subscribed would find nobody
                    wait_for(partial(said, log, READY), "the floor's caller")
            wait_for(lambda: port_open(http_port), f"the floor's gateway on port {http_port}")
            yield f"http://127.0.0.1:{http_port}/"
        finally:
            stop(procs)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Each process ended by its PID, the last started first; one that ignores the request is killed."""
    for proc in reversed(procs):
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def port_open(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def said(log: Path, line: str) -> bool:
    return line in log.read_text(errors="replace")


def wait_for(ready: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    end = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > end:
            raise RuntimeError(f"{what}: not ready after {timeout_s:g} s")
        time.sleep(0.02)


def internal_roles(parser: argparse.ArgumentParser) -> Any:
    """The processes a floor starts as subcommands (`caller`, `gateway`), and the provider's latency of a
    run on its own; returns the subcommands, for more."""
    sub = parser.add_subparsers(dest="role")
    c = sub.add_parser("caller", help="(internal) a floor's caller process")
    c.add_argument("nats_url")
    c.add_argument("provider_url")
    g = sub.add_parser("gateway", help="(internal) the floor's gateway process")
    g.add_argument("nats_url")
    g.add_argument("port", type=int)
    parser.add_argument("--latency-ms", type=int, default=200, help="the fake provider's latency")
    return sub


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    internal_roles(parser)
    parser.add_argument("--samples", type=int, default=60, help="turns at c=1")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of the c=32 run")
    args = parser.parse_args()
    if args.role == "caller":
        from shared import runtime

        runtime.run(caller(args.nats_url, args.provider_url))
    elif args.role == "gateway":
        import uvicorn

        uvicorn.run(gateway_app(args.nats_url), host="127.0.0.1", port=args.port, log_level="warning",
                    access_log=False, lifespan="on")
    else:
        standalone(args.latency_ms, args.samples, args.seconds)


def standalone(latency_ms: int, samples: int, seconds: float) -> None:
    from benchmarks.panel import MEMBERS, floor_runs
    from tests.fakes.provider import FakeProvider

    provider = FakeProvider(models={MEMBERS[0]: {"latency_ms": latency_ms}}).start()
    try:
        runs = floor_runs(provider.base_url + "/chat/completions", samples, seconds)
    finally:
        provider.stop()
    print(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()

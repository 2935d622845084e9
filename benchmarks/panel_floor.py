"""The floor of a panel's design: the same hops with nothing of the product on them.

A panel crosses client → gateway (HTTP) → the seater (a NATS request; it records the seating in the
event stream before it answers) → one call per seat on the JetStream work queue → callers (a standing
pull) → provider (HTTP, streamed, as U-2 asks) → each answer stored in the event stream, the gateway
hearing it as it is stored → the client, once every seat is in. This module runs those hops bare (a raw
ASGI app on uvicorn, a seater that answers a fixed seating, callers that hand back the provider's whole
reply), on the same event loops, so `make bench` can show how much of a panel's overhead is the design
and how much the product's own work, and what other designs would cost (`Design`): `plan=False` seats the
panel in the gateway (no seater hop), `durable=False` sends the calls and answers over core NATS (a queue
group: nothing stored, nothing redelivered), `seater_queues` has the seater queue the calls as it plans
(the gateway names the panel). A yardstick, not a product path: no keys, limits, ledger, rotation or
formats.

    python -m benchmarks.panel_floor      # the floor and its variants, against the fake provider
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks.floor import Receive, Scope, Send, internal_roles, lifespan, port_open, said, stop, wait_for

PLAN = "floor.plan"
CALLS_STREAM, EVENTS_STREAM, CONSUMER = "FLOOR_CALLS", "FLOOR_EVENTS", "floor-callers"
CORE_CALLS = "floor.core.call"
READY = "floor panel process ready"
SEAT_MODELS = ("alpha-7b", "bravo-8b", "charlie-9b", "delta-10b", "echo-11b")  # 3 members and 2 explorers


class Design(NamedTuple):
    """Which of a panel's hops a floor runs: the seater's plan, calls and answers stored in JetStream, and
    (a design not built) the seater queueing the calls itself, the gateway naming the panel so that it
    listens for the answers before any call is out."""

    plan: bool = True
    durable: bool = True
    seater_queues: bool = False

    def flags(self) -> list[str]:
        return [flag for flag, on in (("--no-plan", not self.plan), ("--core", not self.durable),
                                      ("--seater-queues", self.seater_queues)) if on]


VARIANTS = {"design": Design(), "no_plan_hop": Design(plan=False), "core_nats": Design(durable=False),
            "neither": Design(plan=False, durable=False), "seater_queues": Design(seater_queues=True)}


def call_subject(panel: str, seat: int) -> str:
    return f"floor.call.{panel}.{seat}"


def answer_subject(panel: str, seat: int | str) -> str:
    return f"floor.ev.seat.{panel}.{seat}"


def provider_body(model: str) -> bytes:
    """What a caller asks for a seat (U-2: streamed, with usage)."""
    return json.dumps({"model": model, "messages": [{"role": "user", "content": "Name one benchmark."}],
                       "stream": True, "stream_options": {"include_usage": True}}).encode()


async def queue_calls(nc: Any, panel: str, seats: list[str], durable: bool) -> list[asyncio.Future[Any]]:
    """One call per seat, on the work queue (the acks to come are returned) or to the core queue group."""
    calls = [json.dumps({"panel": panel, "seat": i, "model": m}).encode() for i, m in enumerate(seats)]
    if not durable:
        for call in calls:
            await nc.publish(CORE_CALLS, call)
        return []
    js = nc.jetstream()
    return [await js.publish_async(call_subject(panel, i), call, headers={"Nats-Msg-Id": f"{panel}.{i}"})
            for i, call in enumerate(calls)]


async def provision(nats_url: str) -> None:
    """The two streams and the callers' durable consumer, as the product's are (file storage)."""
    import nats
    from nats.js import api

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await js.add_stream(api.StreamConfig(name=CALLS_STREAM, subjects=["floor.call.>"],
                                         retention=api.RetentionPolicy.WORK_QUEUE,
                                         storage=api.StorageType.FILE))
    await js.add_stream(api.StreamConfig(name=EVENTS_STREAM, subjects=["floor.ev.>"],
                                         storage=api.StorageType.FILE))
    await js.add_consumer(CALLS_STREAM, api.ConsumerConfig(
        durable_name=CONSUMER, ack_policy=api.AckPolicy.EXPLICIT, max_ack_pending=20_000))
    await nc.close()


async def seater(nats_url: str, design: Design) -> None:
    """Each plan: a seating recorded in the event stream (its ack heard after the answer), then answered;
    with `seater_queues`, the calls queued between the two, under the panel id the gateway named."""
    import nats

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    acks: set[asyncio.Future[Any]] = set()

    async def on_plan(msg: Any) -> None:
        panel = json.loads(msg.data)["panel"] if design.seater_queues else secrets.token_hex(6)
        plan = json.dumps({"panel": panel, "seats": SEAT_MODELS}).encode()
        pending = [await js.publish_async(f"floor.ev.seated.{panel}", plan, headers={"Nats-Msg-Id": panel})]
        if design.seater_queues:
            pending += await queue_calls(nc, panel, list(SEAT_MODELS), durable=True)
        for ack in pending:
            acks.add(ack)
            ack.add_done_callback(acks.discard)
        await msg.respond(plan)

    await nc.subscribe(PLAN, queue="seaters", cb=on_plan)
    await nc.flush()
    print(READY, flush=True)
    await asyncio.Event().wait()


async def caller(nats_url: str, provider_url: str, durable: bool) -> None:
    """Each call: the provider asked, its reply read to the end, the answer published (stored, when
    durable, before the call is acked)."""
    import aiohttp
    import nats

    from shared.standing_pull import StandingPull

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    session = aiohttp.ClientSession()
    headers = {"Content-Type": "application/json"}
    tasks: set[asyncio.Task[None]] = set()

    async def answer(data: bytes) -> tuple[str, bytes]:
        call = json.loads(data)
        async with session.post(provider_url, data=provider_body(call["model"]), headers=headers) as resp:
            reply = await resp.read()
        return answer_subject(call["panel"], call["seat"]), reply

    async def stored(msg: Any) -> None:
        subject, reply = await answer(msg.data)
        await js.publish(subject, reply, headers={"Nats-Msg-Id": subject})
        await msg.ack()

    async def heard(msg: Any) -> None:
        subject, reply = await answer(msg.data)
        await nc.publish(subject, reply)

    def spawn(msg: Any) -> None:
        task = asyncio.create_task(stored(msg) if durable else heard(msg))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def on_call(msg: Any) -> None:
        spawn(msg)

    if durable:
        await StandingPull(nc, CALLS_STREAM, CONSUMER, spawn, lambda: 512 - len(tasks)).start()
    else:
        await nc.subscribe(CORE_CALLS, queue="callers", cb=on_call)
    await nc.flush()
    print(READY, flush=True)
    await asyncio.Event().wait()


def gateway_app(nats_url: str, design: Design) -> Any:
    """The bare gateway: a seating (asked, or its own), one call per seat (unless the seater queued them),
    every answer gathered, all of them as the response body."""
    conn: list[Any] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(nats_url, conn, receive, send)
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        nc = conn[0]
        answers: asyncio.Queue[bytes] = asyncio.Queue()

        async def on_answer(msg: Any) -> None:
            answers.put_nowait(msg.data)

        if design.seater_queues:  # named here, so the answers are heard before any call is out
            panel = secrets.token_hex(6)
            sub = await nc.subscribe(answer_subject(panel, "*"), cb=on_answer)
            asked = json.dumps({"panel": panel}).encode()
            seats = json.loads((await nc.request(PLAN, asked, timeout=5)).data)["seats"]
        else:
            if design.plan:
                seating = json.loads((await nc.request(PLAN, b"", timeout=5)).data)
                panel, seats = str(seating["panel"]), list(seating["seats"])
            else:
                panel, seats = secrets.token_hex(6), list(SEAT_MODELS)
            sub = await nc.subscribe(answer_subject(panel, "*"), cb=on_answer)
            await asyncio.gather(*await queue_calls(nc, panel, seats, design.durable))
        body = [await asyncio.wait_for(answers.get(), 30) for _ in seats]
        await sub.unsubscribe()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps([b.decode() for b in body]).encode()})

    return app


@contextlib.contextmanager
def panel_floor_path(provider_url: str, design: Design = Design(), callers: int = 2) -> Iterator[str]:
    """A NATS server with JetStream, the floor's seater (when `plan`), callers and gateway, stopped by PID on
    the way out; yields the URL."""
    from shared.natsserver import free_port, nats_server_binary

    nats_port, http_port = free_port(), free_port()
    nats_url = f"nats://127.0.0.1:{nats_port}"
    me = [sys.executable, "-m", "benchmarks.panel_floor"]
    mode = design.flags()
    with tempfile.TemporaryDirectory(prefix="panel-floor-") as work:
        procs: list[subprocess.Popen[bytes]] = []

        def start(cmd: list[str], ready: str = "") -> None:
            log = Path(work) / f"{len(procs)}.log"
            with open(log, "wb") as out:
                procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT))
            if ready:  # a request before a process listens would find nobody
                wait_for(lambda: said(log, READY), f"the panel floor's {ready}")

        try:
            start([nats_server_binary(), "-a", "127.0.0.1", "-p", str(nats_port), "-js", "-sd",
                   str(Path(work) / "js")])
            wait_for(lambda: port_open(nats_port), f"nats-server on port {nats_port}")
            asyncio.run(provision(nats_url))
            if design.plan:
                start([*me, *mode, "seater", nats_url], "seater")
            for _ in range(callers):
                start([*me, *mode, "caller", nats_url, provider_url], "caller")
            start([*me, *mode, "gateway", nats_url, str(http_port)])
            wait_for(lambda: port_open(http_port), f"the panel floor's gateway on port {http_port}")
            yield f"http://127.0.0.1:{http_port}/"
        finally:
            stop(procs)


def panel_floor_runs(direct_url: str, samples: int) -> dict[str, Any]:
    """Each variant at concurrency 1, against its own run of the same seats asked directly at once (the
    fan-out a panel is measured against), the two interleaved."""
    from benchmarks.panel import BODY, DIRECT_BODY, load, summary

    runs: dict[str, Any] = {}
    for name, design in VARIANTS.items():
        with panel_floor_path(direct_url, design) as url:
            load(url, BODY, 1, 600, 4)  # warm-up: connections, the consumer's first pull
            fanout = summary(load(direct_url, DIRECT_BODY, 1, 600, samples, fanout=len(SEAT_MODELS)))
            floor = summary(load(url, BODY, 1, 600, samples))
        runs[name] = {"fanout": fanout, "floor": floor, "overhead_p50_ms": floor["p50_ms"] - fanout["p50_ms"]}
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-plan", action="store_true",
                        help="(internal) the gateway seats the panel itself")
    parser.add_argument("--core", action="store_true", help="(internal) calls and answers over core NATS")
    parser.add_argument("--seater-queues", action="store_true", help="(internal) the seater queues the calls")
    internal_roles(parser).add_parser("seater", help="(internal) the floor's seater process").add_argument(
        "nats_url")
    parser.add_argument("--samples", type=int, default=60, help="panels per variant at c=1")
    args = parser.parse_args()
    from shared import runtime

    design = Design(plan=not args.no_plan, durable=not args.core, seater_queues=args.seater_queues)
    if args.role == "seater":
        runtime.run(seater(args.nats_url, design))
    elif args.role == "caller":
        runtime.run(caller(args.nats_url, args.provider_url, design.durable))
    elif args.role == "gateway":
        import uvicorn

        uvicorn.run(gateway_app(args.nats_url, design), host="127.0.0.1",
                    port=args.port, log_level="warning", access_log=False, lifespan="on")
    else:
        standalone(args.latency_ms, args.samples)


def standalone(latency_ms: int, samples: int) -> None:
    from tests.fakes.provider import FakeProvider

    provider = FakeProvider(models={m: {"latency_ms": latency_ms} for m in SEAT_MODELS}).start()
    try:
        runs = panel_floor_runs(provider.base_url + "/chat/completions", samples)
    finally:
        provider.stop()
    for name, run in runs.items():
        print(f"{name:12} overhead p50 against {len(SEAT_MODELS)} direct at once: "
              f"{run['overhead_p50_ms']:.1f} ms (floor p50 {run['floor']['p50_ms']:.1f}, "
              f"fan-out p50 {run['fanout']['p50_ms']:.1f}, errors {run['floor']['errors']})")


if __name__ == "__main__":
    main()

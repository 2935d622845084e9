"""The seater and the callers, played over the bus by a test, so each path of the gateway's panel runner
can be driven: answers out of seat order, a seat nobody answers, a completion the runner never saw."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from services.gateway.ask import Ask, make_ask
from services.gateway.panel.progress import Update
from services.gateway.panel.runner import PanelRun, PanelRunner
from shared import bus, subjects
from shared.commands import Plan, SeatCall
from shared.config_state import ConfigState
from shared.events import CollectionSaved, EndpointSaved, SeatCompleted, SeatPlan, decode_event
from shared.settings import GatewaySettings

PANEL = "p20260102-030405-ab12"
ENDPOINT = EndpointSaved(id="cfg:e", name="fake", base="http://127.0.0.1:9/v1", headers={"X-Title": "bench"})
CORE = CollectionSaved(id="cfg:c", name="core", members=["m1", "m2"])


def seats(count: int) -> list[SeatPlan]:
    return [
        SeatPlan(
            call=f"{PANEL}.member{i}",
            seat="member",
            alias=f"m{i}",
            served=f"org/m{i}",
            endpoint="fake",
            connection="fake",
        )
        for i in range(1, count + 1)
    ]


def the_plan(count: int = 2) -> Plan:
    return Plan(
        panel=PANEL,
        collection="core",
        shape="general",
        shape_by="set on the collection",
        members=count,
        explorers=0,
        seats=seats(count),
    )


def answer(call: SeatCall, text: str = "", status: str = "ok") -> SeatCompleted:
    return SeatCompleted(
        id=f"seat:{call.call}",
        call=call.call,
        panel=call.panel,
        seat=call.seat,
        alias=call.alias,
        served=call.served,
        endpoint=call.endpoint,
        connection=call.connection,
        collection=call.collection,
        task=call.task,
        purpose=call.purpose,
        status="ok" if status == "ok" else "error",
        seconds=0.2,
        answer=text or f"{call.alias} says hi",
        caller="test-caller",
    )


def completion_of(seat: SeatPlan, text: str) -> SeatCompleted:
    return SeatCompleted(
        id=f"seat:{seat.call}",
        call=seat.call,
        panel=PANEL,
        seat=seat.seat,
        alias=seat.alias,
        served=seat.served,
        endpoint=seat.endpoint,
        connection=seat.connection,
        collection="core",
        status="ok",
        seconds=0.1,
        answer=text,
        caller="earlier-caller",
    )


class Bench:
    """The seater and the callers, played over the bus by the test."""

    def __init__(self, nc: bus.NATS) -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.plan: Plan = the_plan()
        self.before_reply: Callable[[], Any] | None = None
        self.calls: list[SeatCall] = []
        self.call_headers: list[dict[str, str]] = []
        self.answer_calls: Callable[[list[SeatCall]], list[SeatCompleted]] = lambda calls: [
            answer(c) for c in reversed(calls)
        ]
        self.expected = 2
        # Calls after the panel's seats are the merger's: answered one by one (None: left unanswered).
        self.answer_merger: Callable[[SeatCall], SeatCompleted | None] = lambda c: answer(c, "One view.")
        self.subs: list[Any] = []

    async def start(self) -> None:
        async def plan(msg: Any) -> None:
            if self.before_reply is not None:
                await self.before_reply()
            await msg.respond(self.plan.model_dump_json().encode())

        async def call(msg: Any) -> None:
            self.calls.append(SeatCall.model_validate_json(msg.data))
            self.call_headers.append(dict(msg.headers or {}))
            if len(self.calls) == self.expected:  # every seat queued: answer them, in the test's order
                for done in self.answer_calls(self.calls):
                    await bus.publish_event(self.js, done)
            elif len(self.calls) > self.expected:
                merged = self.answer_merger(self.calls[-1])
                if merged is not None:
                    await bus.publish_event(self.js, merged)

        self.subs.append(await self.nc.subscribe(subjects.RPC_SEATER_PLAN, cb=plan))
        self.subs.append(await self.nc.subscribe(subjects.CALLS_ALL, cb=call))
        await self.nc.flush()

    async def stop(self) -> None:
        for sub in self.subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()


def runner(nc: bus.NATS, **settings: Any) -> PanelRunner:
    config = ConfigState()
    config.apply(ENDPOINT, 1)
    config.apply(CORE, 2)
    return PanelRunner(nc, config, GatewaySettings(**settings), "gateway-test")


def ask(prompt: str = "What is 2+2?") -> Ask:
    return make_ask(
        "openai_chat",
        "bench/core",
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": prompt}],
    )


async def run_to_end(run: PanelRun) -> list[Update]:
    out: list[Update] = []
    async with asyncio.timeout(20):
        async for update in run.updates():
            out.append(update)
    return out


async def stored(js: Any, subject: str) -> Any:
    raw = await js.get_last_msg(subjects.EVENTS_STREAM, subject)
    return decode_event(raw.data)

"""The panel runner on a real NATS: plan → one SeatCall per seat → answers as they land → PanelAnswered.

The seater and the callers are played by this test over the bus (their own services are tested apart), so
each path of the runner can be driven: answers out of seat order, a seat nobody answers, a completion the
runner's subscription never saw, a caller that beats the gateway's own deadline write, a refusal.
"""

from __future__ import annotations

import asyncio
import json

from services.gateway.panel.progress import Failed, Finished, Landed, Seated
from services.gateway.panel.resolve import Resolved
from shared import bus, subjects
from shared.commands import Plan, PlanRefusal
from shared.events import PanelAnswered, SeatCompleted
from shared.natsserver import NatsServer
from tests.integration.gateway.played import (
    CORE,
    ENDPOINT,
    PANEL,
    Bench,
    answer,
    ask,
    completion_of,
    run_to_end,
    runner,
    stored,
)


async def test_seats_land_in_finish_order_and_the_panel_is_logged(nc: bus.NATS, bench: Bench) -> None:
    panels = runner(nc)
    updates = await run_to_end(panels.start(ask(), Resolved(CORE, "all")))
    assert isinstance(updates[0], Seated) and updates[0].plan.panel == PANEL
    landed = [u for u in updates[1:-1] if isinstance(u, Landed)]
    assert [u.seat.call for u in landed] == [f"{PANEL}.member2", f"{PANEL}.member1"]  # answered in reverse
    final = updates[-1]
    assert isinstance(final, Finished)
    assert {c: r.answer for c, r in final.results.items()} == {
        f"{PANEL}.member1": "m1 says hi",
        f"{PANEL}.member2": "m2 says hi",
    }
    # one SeatCall per seat, deduplicated by call id, text-only messages, the endpoint from the config
    assert [h.get("Nats-Msg-Id") for h in bench.call_headers] == [
        f"call:{PANEL}.member1",
        f"call:{PANEL}.member2",
    ]
    first = bench.calls[0]
    assert (first.base, first.headers, first.endpoint) == (ENDPOINT.base, {"X-Title": "bench"}, "fake")
    assert [m.model_dump(exclude_none=True) for m in first.messages] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 2+2?"},
    ]
    assert first.task == "What is 2+2? (bench/core, general)"
    assert first.timeout_s == 420.0
    await asyncio.wait_for(asyncio.gather(*panels.running), 10)  # the log line is recorded after the reply
    logged = await stored(nc.jetstream(), subjects.panel_subject(PANEL))
    assert isinstance(logged, PanelAnswered)
    assert (logged.id, logged.calls, logged.prompt, logged.system) == (
        f"answered:{PANEL}",
        [f"{PANEL}.member1", f"{PANEL}.member2"],
        "What is 2+2?",
        "Be brief.",
    )


async def test_a_seat_nobody_answers_is_an_error_at_the_deadline(nc: bus.NATS, bench: Bench) -> None:
    bench.answer_calls = lambda calls: [answer(calls[0])]
    panels = runner(nc, seat_deadline_s=0.5)
    updates = await run_to_end(panels.start(ask(), Resolved(CORE, "all")))
    final = updates[-1]
    assert isinstance(final, Finished)
    late = final.results[f"{PANEL}.member2"]
    assert (late.status, late.error, late.answer) == ("error", "no answer in 0.5s", "")
    in_stream = await stored(nc.jetstream(), subjects.seat_subject(f"{PANEL}.member2"))
    assert isinstance(in_stream, SeatCompleted) and in_stream.error == "no answer in 0.5s"
    assert final.results[f"{PANEL}.member1"].answer == "m1 says hi"


async def test_a_completion_the_subscription_missed_is_found_in_the_stream(
    nc: bus.NATS, bench: Bench
) -> None:
    js = nc.jetstream()
    early = completion_of(bench.plan.seats[0], "stored before the gateway listened")

    async def store_first() -> None:
        await bus.publish_event(js, early)

    bench.before_reply = store_first
    bench.answer_calls = lambda calls: [answer(calls[1])]
    panels = runner(nc, seat_recheck_s=0.2, seat_deadline_s=30)
    final = (await run_to_end(panels.start(ask(), Resolved(CORE, "all"))))[-1]
    assert isinstance(final, Finished)
    assert final.results[f"{PANEL}.member1"].answer == "stored before the gateway listened"
    assert final.results[f"{PANEL}.member2"].status == "ok"


async def test_a_callers_answer_stored_first_beats_the_gateways_deadline_error(
    nc: bus.NATS, bench: Bench
) -> None:
    js = nc.jetstream()
    early = completion_of(bench.plan.seats[0], "the caller got there first")

    async def store_first() -> None:
        await bus.publish_event(js, early)

    bench.before_reply = store_first
    bench.answer_calls = lambda calls: [answer(calls[1])]
    panels = runner(nc, seat_recheck_s=3600, seat_deadline_s=0.5)
    final = (await run_to_end(panels.start(ask(), Resolved(CORE, "all"))))[-1]
    assert isinstance(final, Finished)
    assert final.results[f"{PANEL}.member1"].answer == "the caller got there first"
    in_stream = await stored(js, subjects.seat_subject(f"{PANEL}.member1"))
    assert in_stream.answer == "the caller got there first"


async def test_a_seater_refusal_keeps_its_status(nc: bus.NATS, bench: Bench) -> None:
    bench.plan = Plan(refusal=PlanRefusal(status=413, message="too large for m1 (8,000)"))
    updates = await run_to_end(runner(nc).start(ask(), Resolved(CORE, "all")))
    assert updates == [Failed(413, "too large for m1 (8,000)")]
    assert bench.calls == []


async def test_no_seater_is_a_503(nc: bus.NATS) -> None:
    updates = await run_to_end(runner(nc).start(ask(), Resolved(CORE, "all")))
    assert len(updates) == 1 and isinstance(updates[0], Failed) and updates[0].status == 503
    assert "no seater" in updates[0].message


async def test_a_panel_runs_on_when_nobody_reads_it(nc: bus.NATS, bench: Bench) -> None:
    panels = runner(nc)
    run = panels.start(ask(), Resolved(CORE, "all"))
    assert run.task is not None
    async with asyncio.timeout(20):
        await run.task  # the request that asked is gone; the panel still finishes and is logged
    logged = await stored(nc.jetstream(), subjects.panel_subject(PANEL))
    assert isinstance(logged, PanelAnswered)
    assert json.loads(logged.model_dump_json())["calls"] == [f"{PANEL}.member1", f"{PANEL}.member2"]


async def test_after_a_reconnect_the_runner_looks_in_the_stream(
    nc: bus.NATS, bench: Bench, nats_server: NatsServer
) -> None:
    js = nc.jetstream()
    missed = completion_of(bench.plan.seats[0], "answered while the gateway was not listening")

    async def store_first() -> None:
        await bus.publish_event(js, missed)

    bench.before_reply = store_first
    bench.answer_calls = lambda calls: [answer(calls[1])]
    panels = runner(nc, seat_recheck_s=3600, seat_deadline_s=120)  # only the reconnect can find it in time
    run = panels.start(ask(), Resolved(CORE, "all"))
    async with asyncio.timeout(20):
        assert isinstance(await run.next(), Seated)
        landed = await run.next()
        assert isinstance(landed, Landed) and landed.seat.call == f"{PANEL}.member2"
        await asyncio.to_thread(nats_server.restart)
        rest = [update async for update in run.updates()]
    assert isinstance(rest[0], Landed)
    assert rest[0].done.answer == "answered while the gateway was not listening"
    assert isinstance(rest[-1], Finished)

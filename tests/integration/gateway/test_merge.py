"""Merged mode on a real NATS (P-15, A-21..A-23): after the panel, the merger is one more seat on the work
queue, its answer gathered like any other; whatever becomes of it, the panel finishes and is logged."""

from __future__ import annotations

import asyncio

from services.gateway.panel.merge import INSTRUCTION
from services.gateway.panel.progress import Finished, Landed
from services.gateway.panel.resolve import Resolved
from shared import bus, subjects
from shared.commands import MergerCandidate
from shared.events import PanelAnswered, SeatCompleted
from tests.integration.gateway.played import CORE, PANEL, Bench, answer, ask, run_to_end, runner, stored

BOSS = MergerCandidate(alias="boss", served="org/boss", endpoint="fake", connection="fake")


async def merged_panel(nc: bus.NATS, bench: Bench, **settings: float) -> tuple[Finished, PanelAnswered]:
    panels = runner(nc, **settings)
    updates = await run_to_end(panels.start(ask(), Resolved(CORE, "merged")))
    assert not [u for u in updates if isinstance(u, Landed) and u.seat.seat == "merger"]  # told nobody
    final = updates[-1]
    assert isinstance(final, Finished) and final.merge is not None
    await asyncio.wait_for(asyncio.gather(*panels.running), 10)
    logged = await stored(nc.jetstream(), subjects.panel_subject(PANEL))
    assert isinstance(logged, PanelAnswered)
    return final, logged


async def test_the_merger_is_a_seat_asked_after_the_panel(nc: bus.NATS, bench: Bench) -> None:
    bench.plan = bench.plan.model_copy(update={"mergers": [BOSS]})
    final, logged = await merged_panel(nc, bench)
    assert final.merge is not None and final.merge.merged
    merger = bench.calls[-1]
    assert len(bench.calls) == 3 and merger.call == f"{PANEL}.merger"
    assert (merger.seat, merger.alias, merger.purpose) == ("merger", "boss", "merger")
    assert merger.messages[0].content == INSTRUCTION
    text = merger.messages[1].content
    assert isinstance(text, str)
    assert text.startswith("THE REQUEST\n\nBe brief.\n\nWhat is 2+2?\n\nTHE ANSWERS")
    assert "## member — m1\n\nm1 says hi" in text and "## member — m2\n\nm2 says hi" in text
    in_stream = await stored(nc.jetstream(), subjects.seat_subject(f"{PANEL}.merger"))
    assert isinstance(in_stream, SeatCompleted) and in_stream.answer == "One view."
    assert final.merge.done == in_stream
    assert logged.calls == [f"{PANEL}.member1", f"{PANEL}.member2", f"{PANEL}.merger"]
    assert (logged.reply, logged.note) == ("merged", "")


async def test_a_silent_merger_is_an_error_at_its_deadline_and_the_panel_stands(
    nc: bus.NATS, bench: Bench
) -> None:
    bench.plan = bench.plan.model_copy(update={"mergers": [BOSS]})
    bench.answer_merger = lambda call: None
    final, logged = await merged_panel(nc, bench, seat_deadline_s=0.5)
    assert final.merge is not None and not final.merge.merged
    assert final.merge.note == "the merger boss came back error: no answer in 0.5s"
    assert set(final.results) == {f"{PANEL}.member1", f"{PANEL}.member2"}
    assert logged.calls[-1] == f"{PANEL}.merger" and logged.reply == "all" and logged.note == final.merge.note
    recorded = await stored(nc.jetstream(), subjects.seat_subject(f"{PANEL}.merger"))
    assert (recorded.purpose, recorded.status) == ("merger", "error")


async def test_no_merge_call_when_the_mergers_window_is_too_small(nc: bus.NATS, bench: Bench) -> None:
    small = BOSS.model_copy(update={"context_window": 50})
    bench.plan = bench.plan.model_copy(update={"mergers": [small]})
    final, logged = await merged_panel(nc, bench)
    assert final.merge is not None and final.merge.seat is None
    assert final.merge.note.startswith("no merger has the context window for the merge (about ")
    assert len(bench.calls) == 2  # the two seats; no merger call
    assert logged.calls == [f"{PANEL}.member1", f"{PANEL}.member2"] and logged.note == final.merge.note


async def test_no_seat_answered_means_no_merge(nc: bus.NATS, bench: Bench) -> None:
    bench.plan = bench.plan.model_copy(update={"mergers": [BOSS]})
    bench.answer_calls = lambda calls: [answer(c, status="error") for c in calls]
    final, _ = await merged_panel(nc, bench)
    assert final.merge is not None and final.merge.note == "no seat answered"
    assert len(bench.calls) == 2

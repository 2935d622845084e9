"""The onboarding runner over an in-memory bucket: two replicas run a batch one item at a time, each move is
published, and a runner whose item was taken over stops its steps."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta

from services.prober.onboard_queue import OnboardQueue
from services.prober.onboard_rules import Outcome, QueueDoc, enqueue, take_turn
from services.prober.onboard_runner import AtStep, OnboardRunner
from shared.events import OnboardProgress
from shared.onboarding import OnboardAsk, OnboardItem
from tests.unit.prober.test_scheduler import MemoryRecords

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


class Steps:
    """Five steps that each yield to the loop; records how many items run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.order: list[str] = []

    async def run(self, item: OnboardItem, at_step: AtStep) -> Outcome:
        self.running += 1
        self.most = max(self.most, self.running)
        self.order.append(item.served)
        try:
            for step in range(1, 6):
                await at_step(step, "alias-" + item.served)
                await asyncio.sleep(0)
        finally:
            self.running -= 1
        return Outcome("done", "ok")


async def seeded(queue: OnboardQueue, *served: str) -> None:
    def put(doc: QueueDoc) -> tuple[QueueDoc, None]:
        asks = [OnboardAsk(served=s, endpoint="fake") for s in served]
        return enqueue(doc, asks, [f"o-{s}" for s in served], NOW), None

    await queue.mutate(put)


def test_two_replicas_run_a_batch_one_item_at_a_time_and_publish_every_move() -> None:
    async def scenario() -> tuple[Steps, list[OnboardProgress], QueueDoc]:
        queue, steps, events = OnboardQueue(MemoryRecords()), Steps(), []

        async def publish(event: OnboardProgress) -> None:
            events.append(event)

        await seeded(queue, "a", "b", "c")
        one = OnboardRunner(queue, steps, publish, "p1", 30.0, clock=lambda: NOW)
        two = OnboardRunner(queue, steps, publish, "p2", 30.0, clock=lambda: NOW)
        while await asyncio.gather(one.tick(), two.tick()) != [False, False]:
            pass
        return steps, events, await queue.read()

    steps, events, doc = asyncio.run(scenario())
    assert steps.most == 1 and steps.order == ["a", "b", "c"]
    assert [i.state for i in doc.items] == ["done"] * 3 and doc.runner == ""
    of_a = [(e.state, e.step) for e in events if e.served == "a"]
    assert of_a == [("running", 0), *(("running", n) for n in range(1, 6)), ("done", 5)]
    assert events[-1].remaining == 0 and {e.instance for e in events} <= {"p1", "p2"}


def test_a_runner_whose_item_was_taken_over_stops_its_steps_and_writes_nothing() -> None:
    async def scenario() -> tuple[bool, QueueDoc]:
        queue = OnboardQueue(MemoryRecords())
        await seeded(queue, "a")
        started, cancelled = asyncio.Event(), asyncio.Event()

        class Blocking:
            async def run(self, item: OnboardItem, at_step: AtStep) -> Outcome:
                started.set()
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    cancelled.set()
                    raise
                return Outcome("done")

        async def publish(event: OnboardProgress) -> None:
            pass

        first = OnboardRunner(queue, Blocking(), publish, "p1", 0.03, clock=lambda: NOW)
        running = asyncio.create_task(first.tick())
        await started.wait()

        def steal(doc: QueueDoc) -> tuple[QueueDoc, None]:  # p1's lease lapsed and p2 took the item
            turn = take_turn(doc, "p2", NOW + timedelta(days=1), 60.0)
            assert turn is not None
            return turn.doc, None

        await queue.mutate(steal)
        await asyncio.wait_for(cancelled.wait(), 10)
        await asyncio.wait_for(running, 10)
        return cancelled.is_set(), await queue.read()

    cancelled, doc = asyncio.run(scenario())
    assert cancelled
    assert (doc.runner, doc.items[0].state, doc.items[0].attempts) == ("p2", "running", 2)


def test_a_prober_stopped_mid_step_gives_its_item_back_uncounted() -> None:
    async def scenario() -> QueueDoc:
        queue = OnboardQueue(MemoryRecords())
        await seeded(queue, "a", "b")
        started = asyncio.Event()

        class Blocking:
            async def run(self, item: OnboardItem, at_step: AtStep) -> Outcome:
                started.set()
                await asyncio.Event().wait()
                return Outcome("done")

        async def publish(event: OnboardProgress) -> None:
            pass

        runner = OnboardRunner(queue, Blocking(), publish, "p1", 60.0, clock=lambda: NOW)
        running = asyncio.create_task(runner.tick())
        await started.wait()
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        return await queue.read()

    doc = asyncio.run(scenario())
    assert (doc.runner, [(i.state, i.attempts) for i in doc.items]) == ("", [("queued", 0), ("queued", 0)])
    turn = take_turn(doc, "p2", NOW, 60.0)
    assert turn is not None and turn.item is not None and (turn.item.served, turn.item.attempts) == ("a", 1)

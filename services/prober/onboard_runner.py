"""The onboarding queue's runner, in every prober replica: one item at a time across all of them.

Each tick a replica tries to take a turn (`onboard_rules.take_turn`, written with compare-and-set): only
when no other replica's lease is live. While it runs the item's steps it renews the lease every third of
it; a renewal that finds the queue taken over (this replica was too slow and its lease lapsed) cancels the
steps at once, so an item never runs on two replicas past one lease. A replica killed mid-step stops
renewing; once its lease lapses another replica takes the item over (`attempts` counts it; after
`MAX_ATTEMPTS` the item fails, visibly, with its note). A replica stopped on purpose gives its item back
at once (queued first again, not counted). Every move is published as `onboard_progress`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

import structlog

from services.prober import onboard_rules as rules
from services.prober.onboard_queue import OnboardQueue
from services.prober.onboard_rules import Lost, Outcome, QueueDoc
from shared.events import OnboardProgress
from shared.ids import utcnow
from shared.onboarding import OnboardItem

log = structlog.get_logger("prober.onboard")
RELEASE_S = 2.0  # how long a stopping prober tries to give its item back

Publish = Callable[[OnboardProgress], Awaitable[None]]
# Told as each step begins: (step, the alias so far); raises `Lost` once another replica holds the item.
AtStep = Callable[[int, str], Awaitable[None]]


class Steps(Protocol):
    async def run(self, item: OnboardItem, at_step: AtStep) -> Outcome: ...


def progress(item: OnboardItem, doc: QueueDoc, instance: str, note: str = "") -> OnboardProgress:
    """The item's move as an event; its id names the item, state, step and attempt, so a repeat is one."""
    return OnboardProgress(
        id=f"onboard:{item.id}:{item.state}:{item.step}:{item.attempts}", by=instance, item=item.id,
        served=item.served, endpoint=item.endpoint, mode=item.mode, state=item.state, step=item.step,
        alias=item.alias, note=note or item.note, instance=instance, attempt=item.attempts,
        remaining=rules.remaining(doc))


class OnboardRunner:
    def __init__(self, queue: OnboardQueue, steps: Steps, publish: Publish, instance: str, lease_s: float,
                 tick_s: float = 1.0, clock: Callable[[], datetime] = utcnow) -> None:
        self.queue, self.steps, self.publish, self.me = queue, steps, publish, instance
        self.lease_s, self.tick_s, self.clock = lease_s, tick_s, clock
        self.wake = asyncio.Event()

    async def run(self) -> None:
        """Forever: take a turn whenever one is free (woken at once when this replica queued something)."""
        while True:
            try:
                while await self.tick():
                    pass
            except Exception:
                log.exception("onboard_tick_failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), self.tick_s)
            self.wake.clear()

    async def tick(self) -> bool:
        """Take a turn and run it; False when there was none to take."""
        turn = await self.queue.mutate(self._take)
        if turn is None:
            return False
        for item in turn.gave_up:
            log.warning("onboard_gave_up", item=item.id, served=item.served, why=item.note)
            await self.publish(progress(item, turn.doc, self.me))
        if turn.item is None:
            return bool(turn.gave_up)
        item = turn.item
        took_over = item.attempts > 1
        log.info("onboard_turn", item=item.id, served=item.served, attempt=item.attempts, took_over=took_over)
        await self.publish(progress(item, turn.doc, self.me, "taken over after its prober stopped"
                                    if took_over else ""))
        await self._run(item)
        return True

    def _take(self, doc: QueueDoc) -> tuple[QueueDoc, rules.Turn] | None:
        turn = rules.take_turn(doc, self.me, self.clock(), self.lease_s)
        return None if turn is None else (turn.doc, turn)

    async def _run(self, item: OnboardItem) -> None:
        async def at_step(step: int, alias: str) -> None:
            def move(doc: QueueDoc) -> tuple[QueueDoc, QueueDoc]:
                new = rules.at_step(doc, self.me, item.id, step, alias, self.clock(), self.lease_s)
                return new, new

            doc = await self.queue.mutate(move)
            assert doc is not None
            await self.publish(progress(rules.holding(doc, self.me, item.id), doc, self.me))

        steps = asyncio.create_task(self.steps.run(item, at_step), name=f"onboard-{item.id}")
        keeper = asyncio.create_task(self._keep_lease(item, steps), name=f"onboard-lease-{item.id}")
        try:
            outcome = await steps
        except Lost as lost:
            log.warning("onboard_lost", item=item.id, why=str(lost))
            return
        except asyncio.CancelledError:
            if keeper.done():  # the lease was lost: another replica has the item now
                log.warning("onboard_lost", item=item.id, why="lease taken over")
                return
            await self._release(item)  # this prober is stopping
            raise
        except Exception as exc:  # a bug or the bus: the item fails with its reason, the queue goes on
            log.exception("onboard_step_crashed", item=item.id)
            outcome = Outcome("failed", f"step failed: {type(exc).__name__}: {str(exc)[:300]}")
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
        await self._finish(item, outcome)

    async def _release(self, item: OnboardItem) -> None:
        def give_back(doc: QueueDoc) -> tuple[QueueDoc, None]:
            return rules.released(doc, self.me, item.id), None

        try:
            await asyncio.wait_for(self.queue.mutate(give_back), RELEASE_S)
        except Exception:  # lost, or the bus is away: the lease lapses instead
            log.warning("onboard_not_released", item=item.id, exc_info=True)
        else:
            log.info("onboard_released", item=item.id)

    async def _keep_lease(self, item: OnboardItem, steps: asyncio.Task[Outcome]) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)

            def renew(doc: QueueDoc) -> tuple[QueueDoc, bool]:
                return rules.renewed(doc, self.me, item.id, self.clock(), self.lease_s), True

            try:
                await self.queue.mutate(renew)
            except Lost:
                steps.cancel()
                return
            except Exception:  # the bus is away: keep trying while the lease lasts
                log.warning("onboard_renew_failed", item=item.id, exc_info=True)

    async def _finish(self, item: OnboardItem, outcome: Outcome) -> None:
        def end(doc: QueueDoc) -> tuple[QueueDoc, tuple[QueueDoc, OnboardItem]]:
            new = rules.finished(doc, self.me, item.id, outcome, self.clock())
            return new, (new, next(i for i in new.items if i.id == item.id))

        try:
            done = await self.queue.mutate(end)
        except Lost:
            log.warning("onboard_lost", item=item.id, why="lease taken over before the end")
            return
        assert done is not None
        doc, ended = done
        log.info("onboard_done", item=item.id, served=item.served, state=ended.state, note=ended.note)
        await self.publish(progress(ended, doc, self.me))

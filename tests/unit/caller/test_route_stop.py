"""A route call's stop: it cancels the task doing the call, which ends with the stop's reason; a cancellation
that is not the stop's still cancels."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from services.caller.outcome import CallOutcome
from services.caller.route_call import STOPPED, RouteCaller, Stop


class Hanging(RouteCaller):
    """A call that never ends by itself: its provider is silent."""

    def __init__(self) -> None:
        super().__init__(upstream=None)  # type: ignore[arg-type]  # never reached: `_timed` is replaced
        self.started = asyncio.Event()

    async def _timed(self, *args: Any) -> CallOutcome:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def start(caller: Hanging, stop: Stop) -> asyncio.Task[CallOutcome]:
    task = asyncio.create_task(caller._stoppable(None, 1.0, None, None, None, stop))  # type: ignore[arg-type]
    await caller.started.wait()
    return task


async def test_a_stop_ends_the_call_with_its_reason_and_the_task_goes_on() -> None:
    caller, stop = Hanging(), Stop()
    task = await start(caller, stop)
    stop.set("stopped: the caller is shutting down")
    outcome = await task
    assert outcome.error == "stopped: the caller is shutting down"
    assert not task.cancelled() and task.cancelling() == 0
    assert stop.work is None


async def test_a_second_stop_changes_nothing() -> None:
    caller, stop = Hanging(), Stop()
    task = await start(caller, stop)
    stop.set()
    stop.set("a later reason")
    outcome = await task
    assert outcome.error == STOPPED
    assert task.cancelling() == 0


async def test_a_call_stopped_before_it_starts_is_not_made() -> None:
    caller, stop = Hanging(), Stop()
    stop.set()
    outcome = await caller._stoppable(None, 1.0, None, None, None, stop)  # type: ignore[arg-type]
    assert outcome.error == STOPPED
    assert not caller.started.is_set()


async def test_a_cancellation_that_is_not_the_stop_still_cancels() -> None:
    caller, stop = Hanging(), Stop()
    task = await start(caller, stop)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stop.work is None


async def test_a_stop_and_an_outside_cancellation_together_still_cancel() -> None:
    caller, stop = Hanging(), Stop()
    task = await start(caller, stop)
    task.cancel()
    stop.set()
    with pytest.raises(asyncio.CancelledError):
        await task

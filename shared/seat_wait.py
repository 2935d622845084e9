"""One seat call queued for the callers and its answer awaited: what a probe (the prober) and a retry (the
gateway's `/api/retry`) need, where a panel's fan-out (the gateway's runner) would be far too much.

The completion is heard on its own subject (subscribed before the call is queued), else looked up in the
stream, so a completion stored already (a run resumed after a replica died) is never asked for again.
"""

from __future__ import annotations

import time

import nats.errors
from nats.aio.client import Client as NATS
from nats.js.errors import NotFoundError

from shared import subjects
from shared.commands import SeatCall
from shared.events import SeatCompleted, decode_event

GRACE_S = 15.0  # past a call's deadline, how long to wait for a caller's word before giving up on it


async def stored_completion(nc: NATS, call: str) -> SeatCompleted | None:
    try:
        raw = await nc.jetstream().get_last_msg(subjects.EVENTS_STREAM, subjects.seat_subject(call))
    except NotFoundError:
        return None
    event = decode_event(raw.data or b"")
    return event if isinstance(event, SeatCompleted) else None


async def ask_and_wait(nc: NATS, call: SeatCall, grace_s: float = GRACE_S) -> SeatCompleted | None:
    """The call's completion; None when nobody answered by its deadline and the grace."""
    known = await stored_completion(nc, call.call)
    if known is not None:
        return known
    call = call.model_copy(update={"deadline": time.time() + call.timeout_s})
    sub = await nc.subscribe(subjects.seat_subject(call.call))
    try:
        await nc.jetstream().publish(subjects.call_subject(call.call), call.model_dump_json().encode(),
                                     headers={"Nats-Msg-Id": f"call:{call.call}"})
        end = time.monotonic() + call.timeout_s + grace_s
        while (left := end - time.monotonic()) > 0:
            try:
                msg = await sub.next_msg(timeout=left)
            except nats.errors.TimeoutError:
                break
            event = decode_event(msg.data)
            if isinstance(event, SeatCompleted):
                return event
    finally:
        await sub.unsubscribe()
    return await stored_completion(nc, call.call)  # the subscription may have missed it

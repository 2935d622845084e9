"""One member's attempt at a turn, as the gateway sees it on the bus (RM-5, RM-6).

The relay subject is subscribed BEFORE the caller is asked: a connection's messages reach the server in
order, so the subscription exists before any caller can publish a frame on it. Frames are numbered; a gap
means frames were lost (a slow consumer, a reconnect) and the attempt cannot be trusted. Giving up on a
member publishes on the relay's cancel subject, so its caller stops the upstream call.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from typing import Any

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg as NatsMsg
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from pydantic import ValidationError

from shared import subjects
from shared.commands import RelayFrame, RouteAccepted, RouteCall
from shared.waiting import next_within

ACCEPT_TIMEOUT_S = 5.0
NO_CALLER = "no caller is running to make the call; start the stack"
UNSAFE_TOKEN = re.compile(r"[^A-Za-z0-9_-]")


def relay_for(instance: str) -> str:
    """A fresh relay subject of this gateway instance (a host name's dots would split the token)."""
    return subjects.relay_subject(UNSAFE_TOKEN.sub("-", instance), secrets.token_hex(8))


class MemberRelay:
    def __init__(self, nc: NATS, relay: str) -> None:
        self.nc, self.relay = nc, relay
        self.frames: asyncio.Queue[bytes] = asyncio.Queue()
        self.expected = 0
        self._sub: Any = None

    async def _on_frame(self, msg: NatsMsg) -> None:
        self.frames.put_nowait(msg.data)

    async def open(self) -> MemberRelay:
        self._sub = await self.nc.subscribe(self.relay, cb=self._on_frame)
        return self

    async def ask(self, call: RouteCall) -> str:
        """Hand the call to a caller: "" once one accepted it, else why none did."""
        try:
            msg = await self.nc.request(subjects.RPC_CALLER_ROUTE, call.model_dump_json().encode(),
                                        timeout=ACCEPT_TIMEOUT_S)
        except NoRespondersError:
            return NO_CALLER
        except (TimeoutError, NatsTimeoutError):
            return f"no caller accepted the call within {ACCEPT_TIMEOUT_S:g}s"
        try:
            accepted = RouteAccepted.model_validate_json(msg.data)
        except ValidationError:
            return "the caller answered something that is not an acceptance"
        return "" if accepted.accepted else f"the caller {accepted.caller} refused the call"

    async def next(self, within_s: float) -> RelayFrame | str | None:
        """The next frame; a string when the relay broke (a lost or unreadable frame); None if none came
        within `within_s`."""
        try:
            data = await next_within(self.frames, within_s)
        except TimeoutError:
            return None
        try:
            frame = RelayFrame.model_validate_json(data)
        except ValidationError:
            return "the relay carried an unreadable frame"
        if frame.seq != self.expected:
            return f"the relay lost frames (expected {self.expected}, got {frame.seq})"
        self.expected += 1
        return frame

    async def cancel(self) -> None:
        """Tell the caller to stop this member's call."""
        with contextlib.suppress(Exception):
            await self.nc.publish(subjects.relay_cancel_subject(self.relay), b"")

    async def close(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

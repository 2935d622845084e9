"""One member's attempt at a turn, as the gateway sees it on the bus (RM-5, RM-6).

Every relay of a gateway process is a subject under `bench.relay.<instance>.`, and one wildcard
subscription (the `RelayHub`'s, made once) hears them all and hands each frame to its relay's queue: a turn
costs no SUB and UNSUB of its own, at the server or here. A relay is registered BEFORE the caller is asked,
so no frame of it can come unheard. Frames are numbered; a gap means frames were lost (a slow consumer, a
reconnect) and the attempt cannot be trusted. Giving up on a member publishes on the relay's cancel subject,
so its caller stops the upstream call.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from typing import Any

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg as NatsMsg
from pydantic import ValidationError

from shared import rpc, subjects
from shared.commands import RelayFrame, RouteAccepted, RouteCall
from shared.waiting import next_within

ACCEPT_TIMEOUT_S = 5.0
NO_CALLER = "no caller is running to make the call; start the stack"
UNSAFE_TOKEN = re.compile(r"[^A-Za-z0-9_-]")


class RelayHub:
    """The relays of one gateway process, fed by one subscription to `bench.relay.<instance>.*`."""

    def __init__(self, nc: NATS, instance: str) -> None:
        self.nc = nc
        self.instance = UNSAFE_TOKEN.sub("-", instance)  # a host name's dots would split the token
        self.open_relays: dict[str, MemberRelay] = {}
        self._sub: Any = None
        self._subscribing = asyncio.Lock()

    async def open(self) -> MemberRelay:
        """A fresh relay, heard from now on."""
        if self._sub is None:
            async with self._subscribing:
                if self._sub is None:
                    self._sub = await self.nc.subscribe(subjects.relay_subject(self.instance, "*"),
                                                      cb=self._on_frame)
        relay = MemberRelay(self, subjects.relay_subject(self.instance, secrets.token_hex(8)))
        self.open_relays[relay.relay] = relay
        return relay

    async def _on_frame(self, msg: NatsMsg) -> None:
        relay = self.open_relays.get(msg.subject)
        if relay is not None:  # a late frame of a relay that was closed is nobody's
            relay.frames.put_nowait(msg.data)

    async def close(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None


class MemberRelay:
    def __init__(self, hub: RelayHub, relay: str) -> None:
        self.hub, self.nc, self.relay = hub, hub.nc, relay
        self.frames: asyncio.Queue[bytes] = asyncio.Queue()
        self.expected = 0

    async def ask(self, call: RouteCall) -> str:
        """Hand the call to a caller: "" once one accepted it, else why none did."""
        try:
            await rpc.call(self.nc, subjects.RPC_CALLER_ROUTE, call, RouteAccepted, ACCEPT_TIMEOUT_S)
        except rpc.RpcFailure as failure:
            if failure.answered:
                return f"the caller refused the call ({failure.message})"
            if failure.status == 503:
                return NO_CALLER
            return f"no caller accepted the call within {ACCEPT_TIMEOUT_S:g}s"
        return ""

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

    def close(self) -> None:
        """Frames that come after this are dropped."""
        self.hub.open_relays.pop(self.relay, None)

"""An in-memory stand-in for the NATS connection (`shared.rpc.Bus`): what unit tests publish, subscribe and
ask, with no server. A request goes to the first subscriber of its subject, or takes the next scripted
answer; nobody subscribed is `NoRespondersError`, as on a real server."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

from shared.rpc import Message

Callback = Callable[[Message], Awaitable[None]]


@dataclass
class FakeMsg:
    subject: str
    reply: str
    data: bytes


class FakeSubscription:
    def __init__(self, bus: FakeBus, subject: str, cb: Callback | None) -> None:
        self.bus, self.subject, self.cb = bus, subject, cb

    async def unsubscribe(self, limit: int = 0) -> None:
        self.bus.subs[self.subject].remove(self)


class FakeBus:
    def __init__(self, *scripted: bytes | Exception) -> None:
        self.scripted = list(scripted)  # answers to requests, in order (an exception is raised)
        self.published: list[tuple[str, bytes]] = []
        self.asked: list[tuple[str, bytes]] = []
        self.subs: dict[str, list[FakeSubscription]] = {}
        self.gate = asyncio.Event()  # requests wait until it is set
        self.gate.set()
        self._inboxes: dict[str, asyncio.Future[bytes]] = {}
        self._ids = itertools.count()

    async def publish(
        self, subject: str, payload: bytes = b"", reply: str = "", headers: dict[str, str] | None = None
    ) -> None:
        self.published.append((subject, payload))
        waiting = self._inboxes.pop(subject, None)
        if waiting is not None:
            waiting.set_result(payload)
        for sub in list(self.subs.get(subject, [])):
            if sub.cb is not None:
                await sub.cb(FakeMsg(subject, reply, payload))

    async def request(self, subject: str, payload: bytes = b"", timeout: float = 0.5) -> Message:
        self.asked.append((subject, payload))
        await self.gate.wait()
        if self.scripted:
            answer = self.scripted.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return FakeMsg(subject, "", answer)
        subs = self.subs.get(subject)
        if not subs or subs[0].cb is None:
            raise NoRespondersError
        inbox = f"_INBOX.{next(self._ids)}"
        answered = self._inboxes[inbox] = asyncio.get_running_loop().create_future()
        # The responder runs on its own, as a server's would: a slow one makes this request late, not stuck.
        responding = asyncio.ensure_future(subs[0].cb(FakeMsg(subject, inbox, payload)))
        try:
            return FakeMsg(inbox, "", await asyncio.wait_for(answered, timeout))
        except TimeoutError:
            raise NatsTimeoutError from None
        finally:
            if not responding.done():
                responding.cancel()

    async def subscribe(self, subject: str, queue: str = "", cb: Callback | None = None) -> FakeSubscription:
        sub = FakeSubscription(self, subject, cb)
        self.subs.setdefault(subject, []).append(sub)
        return sub

"""What a route turn is handed and what it hands back: its plan (decided before any member is asked), the
gateway replica's parts it runs on, and the updates the HTTP request reads while it runs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from nats.aio.client import Client as NATS

from services.gateway.ask import Ask
from services.gateway.route_mode.assemble import Chunk, TurnSummary
from services.gateway.route_mode.conversation import Conversation
from services.gateway.route_mode.eligibility import Eligibility
from services.gateway.route_mode.relay import RelayHub
from services.gateway.route_mode.store import ConversationStore
from shared.config_state import ConfigState
from shared.settings import GatewaySettings
from shared.waiting import next_within


@dataclass(frozen=True)
class TurnPlan:
    """A turn ready to walk: its conversation (already in the table), order and the request's fields."""

    ask: Ask
    collection: str  # bench/<c>
    key: str
    conversation: Conversation
    order: list[str]
    eligibility: Eligibility
    fields: dict[str, Any]
    shadows: list[str]
    started: float  # loop time
    at: datetime


@dataclass
class Replica:
    """What a turn needs of the gateway replica it runs on."""

    nc: NATS
    config: ConfigState
    settings: GatewaySettings
    instance: str
    store: ConversationStore
    relays: RelayHub


@dataclass(frozen=True)
class Pieces:
    """The live member's chunks, as the `MemberStream` passes them on."""

    chunks: list[Chunk]
    alias: str


@dataclass(frozen=True)
class Done:
    summary: TurnSummary
    bench: dict[str, Any]
    alias: str


@dataclass(frozen=True)
class Broke:
    """The turn failed: before the 200 this is its status; after it, the error the stream ends with."""

    status: int
    message: str


TurnUpdate = Pieces | Done | Broke


class TurnRun:
    """The updates of one turn in flight; the last is `Done` or `Broke`."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[TurnUpdate] = asyncio.Queue()
        self.ended = False

    def put(self, update: TurnUpdate) -> None:
        self.ended = self.ended or isinstance(update, Done | Broke)
        self._queue.put_nowait(update)

    async def next(self) -> TurnUpdate:
        return await self._queue.get()

    def take_nowait(self) -> TurnUpdate | None:
        """The next update if one is queued already, else None."""
        return None if self._queue.empty() else self._queue.get_nowait()

    async def next_within(self, seconds: float) -> TurnUpdate:
        """The next update; TimeoutError when none comes within `seconds`."""
        return await next_within(self._queue, seconds)

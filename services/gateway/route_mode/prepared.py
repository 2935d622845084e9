"""What a route turn is handed and what it hands back: the turn as prepared (decided before any member is
asked), the gateway replica's parts it runs on, and the updates the HTTP request reads while it runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from nats.aio.client import Client as NATS

from services.gateway.ask import Ask
from services.gateway.route_mode.assemble import Chunk, TurnSummary
from services.gateway.route_mode.conversation import Conversation
from services.gateway.route_mode.relay import RelayHub
from services.gateway.route_mode.store import ConversationStore
from services.gateway.updates import Failed, Updates
from shared.commands import RouteSeating
from shared.config_state import ConfigState
from shared.settings import GatewaySettings


@dataclass(frozen=True)
class PreparedTurn:
    """A turn ready to walk: its conversation (already in the table), its seating and the request's fields."""

    ask: Ask
    collection: str  # bench/<c>
    key: str
    conversation: Conversation
    seating: RouteSeating  # the seater's decision: who may answer, in which order, who shadows
    estimate: int  # the request's size (RM-2), measured once: the seater and the encoder both use it
    fields: dict[str, Any]
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


TurnUpdate = Pieces | Done | Failed


class TurnRun(Updates[TurnUpdate]):
    """The updates of one turn in flight; the last is `Done` or `Failed` (before the 200 its status;
    after it, the error the stream ends with)."""

    def __init__(self) -> None:
        super().__init__()
        self.ended = False

    def put(self, update: TurnUpdate) -> None:
        self.ended = self.ended or isinstance(update, Done | Failed)
        super().put(update)

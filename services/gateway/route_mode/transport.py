"""Route mode's share of one gateway process: the conversation table, the seater's ranking, the turns in
flight, and everything a turn is decided by before its first member is asked (RM-2..RM-4).

`prepare` raises `Refusal` for a turn no member can take (answered with its status and the format's error
body); otherwise the conversation is in the table (opened now if new, its id reserved like a panel's) and
the turn's order is known. `start` walks it in a task of its own.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any
from weakref import WeakKeyDictionary

import structlog
from nats.aio.client import Client as NATS

from services.gateway.ask import Ask, Refusal
from services.gateway.context import GatewayContext
from services.gateway.panel.resolve import Resolved
from services.gateway.route_mode.conversation import (
    Conversation,
    conversation_key,
    live,
    needs_ranking,
    new_conversation,
    next_order,
)
from services.gateway.route_mode.eligibility import eligible_members, members_from_config, turn_needs
from services.gateway.route_mode.plan import Replica, TurnPlan, TurnRun
from services.gateway.route_mode.relay import RelayHub
from services.gateway.route_mode.store import ConversationStore
from services.gateway.route_mode.turn import RouteTurnRun
from services.gateway.route_mode.upstream_request import request_fields
from shared import bus, rpc, subjects
from shared.commands import RoutePlan, RouteRequest
from shared.ids import candidate_id, utcnow

log = structlog.get_logger("gateway.route")

RANK_TIMEOUT_S = 5.0



@dataclass(frozen=True)
class AsSent:
    """What the Ask does not carry: the body as sent (an OpenAI chat request's own fields, a Responses
    request's custom tools)."""

    body: dict[str, Any]


# Set by the generation route before it hands the request to the mode's handler.
AS_SENT: ContextVar[AsSent | None] = ContextVar("route_as_sent", default=None)


class RouteTransport:
    def __init__(self, ctx: GatewayContext) -> None:
        self.ctx = ctx
        self.store = ConversationStore(ctx.nc)
        self.replica = Replica(ctx.nc, ctx.config, ctx.settings, ctx.instance, self.store,
                               RelayHub(ctx.nc, ctx.instance))
        self.running: set[asyncio.Task[None]] = set()

    async def prepare(self, ask: Ask, resolved: Resolved, sent: AsSent) -> TurnPlan:
        loop = asyncio.get_running_loop()
        started, at = loop.time(), utcnow()
        collection = resolved.canonical
        fields = request_fields(ask, sent.body)
        members = members_from_config(resolved.name, self.ctx.config)
        eligibility = eligible_members(collection, members, turn_needs(ask.messages, fields))
        key = conversation_key(collection, ask.caller, ask.messages)
        record, revision = await self.store.read(key)
        conversation = live(record, at)
        opening = None
        if conversation is None:  # opened while the seater ranks: the two do not wait on each other
            fresh = partial(self._fresh, key, collection, ask.caller)
            opening = asyncio.ensure_future(self.store.open(key, fresh, at, revision))
        try:
            ranked = eligibility.aliases
            if needs_ranking(conversation, ranked):
                ranked = await self.rank(resolved.name, ranked)
        except BaseException:
            if opening is not None:
                opening.cancel()
            raise
        if opening is not None:
            conversation = await opening
        assert conversation is not None
        return TurnPlan(
            ask=ask, collection=collection, key=key, conversation=conversation,
            order=next_order(conversation, ranked), eligibility=eligibility, fields=fields,
            shadows=list(resolved.collection.shadows), started=started, at=at,
        )

    async def _fresh(self, key: str, collection: str, caller: str) -> Conversation:
        """A new conversation, its id reserved in `bench_ids` like every id of its kind (C-12)."""
        conversation_id = await bus.reserve_id(self.ctx.js, lambda: candidate_id("r"))
        return new_conversation(conversation_id, key, collection, caller, utcnow())

    async def rank(self, collection: str, aliases: list[str]) -> list[str]:
        """RM-3 by the seater. A seater that is away does not stop an agent: the members go in their order."""
        request = RouteRequest(collection=collection, aliases=aliases, config_seq=self.ctx.config.seq)
        try:
            plan = await rpc.call(self.ctx.nc, subjects.RPC_SEATER_ROUTE, request, RoutePlan, RANK_TIMEOUT_S)
        except rpc.RpcFailure as failure:
            if failure.answered and failure.status < 500:  # the question itself was wrong
                raise Refusal(failure.status, failure.message) from None
            log.warning("route_unranked", why=failure.message[:200])
            return aliases
        ranked = [a for a in plan.order if a in aliases]
        return ranked + [a for a in aliases if a not in ranked]

    def start(self, plan: TurnPlan) -> TurnRun:
        updates = TurnRun()
        task = asyncio.create_task(RouteTurnRun(self.replica, plan, updates).run())
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return updates


_TRANSPORTS: WeakKeyDictionary[NATS, RouteTransport] = WeakKeyDictionary()


def transport_for(ctx: GatewayContext) -> RouteTransport:
    """The process's route transport, made on first use (keyed by its bus connection)."""
    transport = _TRANSPORTS.get(ctx.nc)
    if transport is None or transport.ctx is not ctx:
        transport = _TRANSPORTS[ctx.nc] = RouteTransport(ctx)
    return transport


async def close_transport(nc: NATS) -> None:
    """At shutdown: end the conversation mirror's watch and the relays' subscription (if route mode ran)."""
    transport = _TRANSPORTS.pop(nc, None)
    if transport is not None:
        await transport.replica.relays.close()
        await transport.store.close()

"""Route mode's share of one gateway process: the conversation table, the seater's seating, the turns in
flight, and everything a turn is decided by before its first member is asked (RM-2..RM-4).

`prepare` measures what the request needs and asks the seater who may take the turn and in which order (a
conversation's next turn is answered from the seater's own earlier decision when the seater said it holds:
`seatings`); it raises `Refusal` for a turn no member can take (answered with its status and the format's
error body).
Otherwise the conversation is in the table (opened now if new, its id reserved like a panel's) and the
turn's seating is known. `start` walks it in a task of its own.

A seater that does not answer does not stop an agent mid-conversation: this replica keeps the last seating
of its recent conversations, and a conversation's next turn goes where the seater last sent it. A new
conversation has nothing to fall back on and is refused with a 503.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from functools import partial

import structlog
from nats.aio.client import Client as NATS

from services.gateway.ask import Ask
from services.gateway.panel.resolve import Resolved
from services.gateway.route_mode.conversation import Conversation, conversation_key, live, new_conversation
from services.gateway.route_mode.needs import turn_needs
from services.gateway.route_mode.prepared import PreparedTurn, Replica, TurnRun
from services.gateway.route_mode.relay import RelayHub
from services.gateway.route_mode.seatings import SeatingCache
from services.gateway.route_mode.store import ConversationStore
from services.gateway.route_mode.turn import RouteTurnRun
from shared import bus, bus_calls, rpc, subjects
from shared.commands import RouteRequest, RouteSeating
from shared.config_state import ConfigState
from shared.ids import candidate_id, utcnow
from shared.settings import GatewaySettings

log = structlog.get_logger("gateway.route")

SEAT_TIMEOUT_S = 3.0  # one try; a seating is a lookup, so it is asked again within the patience
KEPT_SEATINGS = 4096  # conversations whose last seating this replica remembers


class RouteDesk:
    def __init__(self, nc: NATS, config: ConfigState, settings: GatewaySettings, instance: str) -> None:
        self.nc, self.config = nc, config
        self.store = ConversationStore(nc)
        self.replica = Replica(nc, config, settings, instance, self.store, RelayHub(nc, instance))
        self.running: set[asyncio.Task[None]] = set()
        self.kept: OrderedDict[str, RouteSeating] = OrderedDict()
        self.seatings = SeatingCache()

    async def prepare(self, ask: Ask, resolved: Resolved) -> PreparedTurn:
        loop = asyncio.get_running_loop()
        started, at = loop.time(), utcnow()
        collection = resolved.canonical
        key = conversation_key(collection, ask.caller, ask.messages)
        record, revision = await self.store.read(key)
        conversation = live(record, at)
        request = RouteRequest(
            collection=resolved.name, needs=turn_needs(ask.messages, ask.route_fields),
            current=conversation.model if conversation else "",
            previous=list(conversation.order) if conversation else [], config_seq=self.config.seq,
        )
        opening = None
        if conversation is None:  # opened while the seater decides: the two do not wait on each other
            fresh = partial(self._fresh, key, collection, ask.caller)
            opening = asyncio.ensure_future(self.store.open(key, fresh, at, revision))
        try:
            seating = await self.seat(request, key)
        except BaseException:
            if opening is not None:
                opening.cancel()
            raise
        if opening is not None:
            conversation = await opening
        assert conversation is not None
        return PreparedTurn(ask=ask, collection=collection, key=key, conversation=conversation,
                            seating=seating, estimate=request.needs.estimate, fields=ask.route_fields,
                            started=started, at=at)

    async def seat(self, request: RouteRequest, key: str) -> RouteSeating:
        """The seater's decision: one it made already when it said that one holds for this request
        (`seatings`); when the seater is away, the last one this replica had for `key`."""
        reused = self.seatings.get(request)
        if reused is not None:
            self._keep(key, reused)
            return reused
        try:
            subject = subjects.RPC_SEATER_ROUTE
            # A conversation under way has the last seating to go on: it does not wait out the patience.
            patience = 0.0 if key in self.kept else self.replica.settings.seater_patience_s
            seating = await rpc.call(self.nc, subject, request, RouteSeating, SEAT_TIMEOUT_S,
                                     patience_s=patience)
        except rpc.RpcFailure as failure:
            kept = self.kept.get(key)
            if failure.answered or kept is None:
                raise bus_calls.refusal(subjects.RPC_SEATER_ROUTE, failure, SEAT_TIMEOUT_S) from None
            log.warning("route_seated_as_before", why=failure.message[:200])
            return kept
        self.seatings.keep(request, seating)
        self._keep(key, seating)
        return seating

    def _keep(self, key: str, seating: RouteSeating) -> None:
        self.kept[key] = seating
        self.kept.move_to_end(key)
        if len(self.kept) > KEPT_SEATINGS:
            self.kept.popitem(last=False)

    async def _fresh(self, key: str, collection: str, caller: str) -> Conversation:
        """A new conversation, its id reserved in `bench_ids` like every id of its kind (C-12)."""
        conversation_id = await bus.reserve_id(self.nc.jetstream(), lambda: candidate_id("r"))
        return new_conversation(conversation_id, key, collection, caller, utcnow())

    def start(self, prepared: PreparedTurn) -> TurnRun:
        updates = TurnRun()
        task = asyncio.create_task(RouteTurnRun(self.replica, prepared, updates).run())
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return updates

    async def close(self, grace_s: float = 0.0) -> None:
        """At shutdown: turns in flight get `grace_s` to end (they are recorded), then the conversation
        mirror's watch and the relays' subscription end."""
        if self.running and grace_s > 0:
            await asyncio.wait(set(self.running), timeout=grace_s)
        await self.replica.relays.close()
        await self.store.close()

"""Real service processes (`python -m services.<name>`) on a test's NATS, and the gateway's route side in
the test's own process, so a route turn crosses the bus exactly as it does in production."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from services.gateway.ask import Ask
from services.gateway.context import GatewayContext
from services.gateway.formats.openai_chat import OpenAIChat
from services.gateway.panel.resolve import resolve
from services.gateway.panel.runner import PanelRunner
from services.gateway.route_mode.desk import RouteDesk
from services.gateway.route_mode.prepared import Done, Failed, Pieces, PreparedTurn, TurnUpdate
from shared import bus, subjects
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.events import EventBase, decode_event
from shared.natsserver import NatsServer
from shared.settings import GatewaySettings


@dataclass
class Gateway:
    """A gateway replica's route side: its own bus connection, config fold and route transport."""

    ctx: GatewayContext
    desk: RouteDesk

    @classmethod
    async def open(cls, nats: NatsServer, instance: str, settings: GatewaySettings) -> Gateway:
        nc = await bus.connect(nats.url, instance, nats.login("gateway"))
        js = nc.jetstream()
        await bus.provision(js, owner=False)
        config = ConfigState()
        projection = bus.Projection(js, subjects.CONFIG, config.apply, name=f"{instance}-config")
        await projection.start()
        panels = PanelRunner(nc, config, settings, instance)
        ctx = GatewayContext(settings=settings, instance=instance, nc=nc, js=js, config=config,
                             projection=projection, panels=panels, modes={},
                             writer=ConfigWriter(js, projection, config), started_at="")
        return cls(ctx, RouteDesk(nc, config, settings, instance))

    async def close(self) -> None:
        if self.desk.running:
            await asyncio.wait(set(self.desk.running), timeout=10)
        await self.ctx.projection.stop()
        await self.ctx.nc.close()

    async def configure(self, *events: EventBase) -> None:
        """Publish config events and wait until this replica folded them."""
        seq = 0
        for event in events:
            seq = await bus.publish_event(self.ctx.js, event)
        await self.ctx.projection.wait_for(seq)

    def ask(self, body: dict[str, Any]) -> Ask:
        return OpenAIChat().parse(body, {})

    async def turn(self, body: dict[str, Any], within: float = 30.0) -> tuple[PreparedTurn, list[TurnUpdate]]:
        """One turn of an OpenAI chat request, start to end: its plan and every update it gave."""
        ask = self.ask(body)
        plan = await self.desk.prepare(ask, resolve(ask, self.ctx.config.collections))
        run = self.desk.start(plan)
        updates: list[TurnUpdate] = []
        while not updates or not isinstance(updates[-1], Done | Failed):
            updates.append(await asyncio.wait_for(run.next(), within))
        return plan, updates


def relayed(updates: list[TurnUpdate]) -> list[dict[str, Any]]:
    return [chunk for u in updates if isinstance(u, Pieces) for chunk in u.chunks]


async def stored(nc: bus.NATS, subject: str, wanted: set[str], within: float = 15.0) -> dict[str, Any]:
    """The events with the wanted ids on `subject`, read back from the stream (waiting for late ones)."""
    js = nc.jetstream()
    found: dict[str, Any] = {}
    end = time.monotonic() + within
    while True:
        sub = await js.subscribe(subject, ordered_consumer=True, stream=subjects.EVENTS_STREAM)
        try:
            while True:
                try:
                    msg = await sub.next_msg(timeout=0.3)
                except TimeoutError:
                    break
                event = decode_event(msg.data)
                if event.id in wanted:
                    found[event.id] = event
        finally:
            await sub.unsubscribe()
        if set(found) == wanted or time.monotonic() > end:
            return found
        await asyncio.sleep(0.2)

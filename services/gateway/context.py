"""What every route of one gateway process shares: settings, the bus, the configuration fold, the panel
runner and the reply modes, the config writer, and when it started (model listings give it as
`modified_at`). Built by the app's lifespan and kept on `app.state.ctx`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from pydantic import BaseModel

from services.gateway import bus_calls
from services.gateway.ask import Ask, Refusal
from services.gateway.panel.resolve import Resolved, resolve
from services.gateway.panel.runner import PanelRunner
from services.gateway.reply_mode import ReplyMode
from shared import bus
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter, config_caught_up
from shared.settings import GatewaySettings

LEDGER_TIMEOUT_S = 30.0

Reply = TypeVar("Reply", bound=BaseModel)


@dataclass
class GatewayContext:
    settings: GatewaySettings
    instance: str
    nc: NATS
    js: JetStreamContext
    config: ConfigState
    projection: bus.Projection
    panels: PanelRunner
    modes: Mapping[str, ReplyMode]  # `all`, `merged`, `route` → the mode that answers it
    writer: ConfigWriter
    started_at: str

    async def resolve(self, ask: Ask) -> Resolved:
        """P-1 (5); an unknown name is looked up again once this replica holds every config event, so a
        collection saved through another replica a moment ago is found."""
        try:
            return resolve(ask, self.config.collections)
        except Refusal as refusal:
            if refusal.status != 404:
                raise
        await config_caught_up(self.js, self.projection)
        return resolve(ask, self.config.collections)

    async def ask_ledger(
        self, subject: str, request: BaseModel, reply_type: type[Reply], timeout_s: float = LEDGER_TIMEOUT_S
    ) -> Reply:
        """A ledger RPC; its failures become refusals (`bus_calls`)."""
        return await bus_calls.ask(self.nc, subject, request, reply_type, timeout_s)

"""What every route of one gateway process shares: settings, the bus, the configuration fold, the panel
runner, the config writer, and when it started (model listings give it as `modified_at`). Built by the
app's lifespan and kept on `app.state.ctx`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NATS
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext

from services.gateway.admin.writer import ConfigWriter, config_caught_up
from services.gateway.ask import Ask, Refusal
from services.gateway.panel.resolve import Resolved, resolve
from services.gateway.panel.runner import PanelRunner
from shared import bus
from shared.config_state import ConfigState
from shared.settings import GatewaySettings

LEDGER_TIMEOUT_S = 30.0


@dataclass
class GatewayContext:
    settings: GatewaySettings
    instance: str
    nc: NATS
    js: JetStreamContext
    config: ConfigState
    projection: bus.Projection
    panels: PanelRunner
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

    async def ask_ledger(self, subject: str, payload: bytes) -> dict[str, Any]:
        """A ledger RPC; its `{"error": {"status", "message"}}` replies become refusals with that status."""
        try:
            data = await bus.request_json(self.nc, subject, payload, LEDGER_TIMEOUT_S)
        except NoRespondersError:
            raise Refusal(503, "the ledger is not running; start the stack") from None
        except (TimeoutError, NatsTimeoutError):
            raise Refusal(503, f"the ledger did not answer within {LEDGER_TIMEOUT_S:g}s; try again") from None
        body = json.loads(data)
        if not isinstance(body, dict):
            raise Refusal(500, "the ledger answered something that is not a JSON object")
        error = body.get("error")
        if isinstance(error, dict):
            raise Refusal(int(error.get("status", 500)), str(error.get("message", "the ledger failed")))
        return body

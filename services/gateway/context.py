"""What every route of one gateway process shares: the process's core (settings, the bus, the configuration
fold and its writer), the panel runner and the reply modes, and when it started (model listings give it as
`modified_at`). Built by the app's lifespan and kept on `app.state.ctx`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from services.gateway.ask import Ask
from services.gateway.panel.resolve import Resolved, resolve
from services.gateway.panel.runner import PanelRunner
from services.gateway.reply_mode import ReplyMode
from shared.config_writer import config_caught_up
from shared.refusal import Refusal
from shared.surface import Core


@dataclass(frozen=True)
class GatewayContext(Core):
    panels: PanelRunner
    modes: Mapping[str, ReplyMode]  # `all`, `merged`, `route` → the mode that answers it
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

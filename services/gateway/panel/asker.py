"""The gateway's panels as other surfaces ask for them (`shared.surface.PanelAsker`): the dashboard's first
run asks one panel of every member, as `bench/<name>:all` over OpenAI chat, through the same resolution and
runner as any client."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from services.gateway.formats import OPENAI_CHAT
from services.gateway.panel.progress import Failed, Finished
from shared.refusal import Refusal
from shared.surface import PanelSummary

if TYPE_CHECKING:
    from services.gateway.context import GatewayContext


class GatewayPanels:
    def __init__(self, ctx: GatewayContext) -> None:
        self.ctx = ctx

    async def ask_panel(self, collection: str, prompt: str, caller: str) -> PanelSummary:
        sent = {"model": f"bench/{collection}:all", "messages": [{"role": "user", "content": prompt}]}
        asked = replace(OPENAI_CHAT.parse(sent, {"alt": ""}), caller=caller)
        resolved = await self.ctx.resolve(asked)
        async for update in self.ctx.panels.start(asked, resolved).updates():
            if isinstance(update, Failed):
                raise Refusal(update.status, update.message)
            if isinstance(update, Finished):
                answered = sum(1 for done in update.results.values() if done.status == "ok")
                return PanelSummary(update.plan.panel, answered, len(update.results))
        raise Refusal(503, "the panel ended without an answer; try again")

"""The console as a surface of the gateway's process (`shared/surface.py`): its routers (the admin API's,
documented; the dashboard's, not), its context once the bus is up, and the live feed closed on the way out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from fastapi import APIRouter
from starlette.datastructures import State

from services.console.context import ConsoleContext
from services.console.dashboard.routes import router as dashboard_router
from services.console.routes.admin_api import ADMIN_ROUTERS
from shared.surface import Core, PanelAsker


class Console:
    def routers(self) -> Sequence[APIRouter]:
        return (*ADMIN_ROUTERS, dashboard_router)  # the pages (H-D4): HTML over the admin API

    async def start(self, state: State, core: Core, panels: PanelAsker) -> None:
        state.console = ConsoleContext(**{f.name: getattr(core, f.name) for f in fields(Core)}, panels=panels)

    async def stop(self, state: State) -> None:
        live = getattr(state, "live", None)
        if live is not None:
            await live.close()


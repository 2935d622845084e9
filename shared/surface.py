"""An HTTP surface served in the gateway's process beside the model APIs (the console today), and what the
process hands it once the bus is up. The composition root (`python -m services ...`) gives surfaces to the
gateway's app, so neither service imports the other: they meet here, as they meet on the bus."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from fastapi import APIRouter
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from pydantic import BaseModel
from starlette.datastructures import State

from shared import bus, bus_calls
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.settings import GatewaySettings

LEDGER_TIMEOUT_S = 30.0

Reply = TypeVar("Reply", bound=BaseModel)


@dataclass(frozen=True)
class PanelSummary:
    """How one panel went: its id, and how many of its seats answered."""

    panel: str
    answered: int
    seats: int


class PanelAsker(Protocol):
    async def ask_panel(self, collection: str, prompt: str, caller: str) -> PanelSummary:
        """One panel of every member (`bench/<collection>:all`) on a user prompt, as `caller`; its failures
        raise `shared.refusal.Refusal`."""
        ...


@dataclass(frozen=True)
class Core:
    """What every surface of one process shares: its settings and name, the bus, the configuration fold with
    its projection and writer, and the ledger's questions."""

    settings: GatewaySettings
    instance: str
    nc: NATS
    js: JetStreamContext
    config: ConfigState
    projection: bus.Projection
    writer: ConfigWriter

    async def ask_ledger(
        self, subject: str, request: BaseModel, reply_type: type[Reply], timeout_s: float = LEDGER_TIMEOUT_S
    ) -> Reply:
        """A ledger RPC; its failures become refusals (`bus_calls`)."""
        return await bus_calls.ask(self.nc, subject, request, reply_type, timeout_s)


class Surface(Protocol):
    def routers(self) -> Sequence[APIRouter]:
        """Included after the gateway's routes and before its catch-all, under the same guard."""
        ...

    async def start(self, state: State, core: Core, panels: PanelAsker) -> None:
        """Called by the lifespan once the bus and the config fold are up; `panels` are the gateway's."""
        ...

    async def stop(self, state: State) -> None:
        """Called on the way out, before the bus is drained."""
        ...

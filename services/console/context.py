"""What every console route shares: the process's core (settings, bus, configuration fold and writer, the
ledger's questions) and the gateway's panels. Built by `Console.start` and kept on `app.state.console`."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import HTTPConnection

from shared.surface import Core, PanelAsker


@dataclass(frozen=True)
class ConsoleContext(Core):
    panels: PanelAsker


def context(conn: HTTPConnection) -> ConsoleContext:
    ctx: ConsoleContext = conn.app.state.console
    return ctx

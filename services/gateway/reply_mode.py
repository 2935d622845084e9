"""The seam every reply mode plugs into (`all`, `merged`, `route`): a mode answers a resolved request in its
format, running its work in a task of its own that reports through `updates.Updates`."""

from __future__ import annotations

from typing import Protocol

from starlette.responses import Response

from services.gateway.ask import Ask
from services.gateway.formats.base import Format
from services.gateway.panel.resolve import Resolved


class ReplyMode(Protocol):
    async def answer(self, fmt: Format, ask: Ask, resolved: Resolved) -> Response: ...

    async def close(self) -> None:
        """At shutdown: let runs in flight end, then let go of what the mode holds on the bus."""

"""Projections only the admin API reads, started on first use so a gateway that is never asked pays nothing:
the change log (C-17, a fold of `bench.ev.config`) and the models resting after a rate limit (L-3, a fold
of `bench.ev.limit.>`, which also brings learned windows into the model facts)."""

from __future__ import annotations

import asyncio
from datetime import datetime

from nats.js import JetStreamContext

from services.console.admin.changelog import ChangeLog
from shared import bus, subjects
from shared.config_state import ConfigState
from shared.events import CooldownStarted, EventBase, LimitLearned


class Cooldowns:
    """Who rests until when; and, into the gateway's config fold, the windows providers stated (learned
    windows, C-15), as the seater folds them."""

    def __init__(self, config: ConfigState) -> None:
        self.until: dict[str, tuple[datetime, str]] = {}
        self.config = config

    def apply(self, event: EventBase, seq: int) -> None:
        if isinstance(event, LimitLearned) and event.axis == "context":
            self.config.learn_window(event.alias, event.limit, event.at)
        if isinstance(event, CooldownStarted):
            current = self.until.get(event.alias)
            if current is None or event.until > current[0]:
                self.until[event.alias] = (event.until, event.why)


class Feeds:
    def __init__(self, js: JetStreamContext, config: ConfigState) -> None:
        self.js = js
        self.log = ChangeLog()
        self.cooldowns = Cooldowns(config)
        self._log: bus.Projection | None = None
        self._cool: bus.Projection | None = None
        self._lock = asyncio.Lock()

    async def changes(self, config_seq: int) -> ChangeLog:
        """The change log, holding at least the config event at `config_seq` (read your writes)."""
        async with self._lock:
            if self._log is None:
                projection = bus.Projection(self.js, subjects.CONFIG, self.log.apply, name="gateway-changes")
                await projection.start()
                self._log = projection
        if config_seq:
            await self._log.wait_for(config_seq)
        return self.log

    async def resting(self) -> Cooldowns:
        async with self._lock:
            if self._cool is None:
                projection = bus.Projection(self.js, subjects.LIMITS_ALL, self.cooldowns.apply,
                                            name="gateway-cooldowns")
                await projection.start()
                self._cool = projection
        return self.cooldowns

    async def stop(self) -> None:
        for projection in (self._log, self._cool):
            if projection is not None:
                await projection.stop()

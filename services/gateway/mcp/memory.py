"""Which seats each agent session was already reminded of, in the `bench_reminders` bucket: an atomic create
per (session, seat), so of two replicas answering the same hook at once only one reminds."""

from __future__ import annotations

from collections.abc import Sequence

from nats.js import JetStreamContext
from nats.js.errors import KeyWrongLastSequenceError

from services.gateway.mcp.reminders import reminder_key
from shared import subjects


class ReminderMemory:
    def __init__(self, js: JetStreamContext) -> None:
        self.js = js

    async def first_time(self, session: str, calls: Sequence[str]) -> list[str]:
        """The calls this session had not been reminded of, now marked as reminded."""
        kv = await self.js.key_value(subjects.REMINDERS_BUCKET)
        fresh: list[str] = []
        for call in calls:
            try:
                await kv.create(reminder_key(session, call), b"1")
            except KeyWrongLastSequenceError:
                continue
            fresh.append(call)
        return fresh

"""Configuration writes (the gateway's admin API, the prober's checks): one event on `bench.ev.config`,
validated against the configuration it follows.

The event is published with `Nats-Expected-Last-Subject-Sequence` = the last config event this gateway
folded, so two writers (two replicas, or the CLI and the dashboard) never both win on stale state: the
loser waits for its projection to catch up, checks again, and retries. The answer goes out only once the
gateway's own projection holds the event (read your writes).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import structlog
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from shared import bus, subjects
from shared.config_state import ConfigState
from shared.events import ConfigEvent

log = structlog.get_logger("config_writer")

# A write: validate against the folded configuration and return the event (raising to refuse); the id is
# the write's own, kept across retries.
Rule = Callable[[ConfigState, str], ConfigEvent]

ATTEMPTS = 5


class WriteConflict(Exception):
    """The configuration kept changing under this write."""


async def config_caught_up(js: JetStreamContext, projection: bus.Projection) -> None:
    """Wait until the projection holds the last config event in the stream (written by anyone)."""
    try:
        last = await js.get_last_msg(subjects.EVENTS_STREAM, subjects.CONFIG)
    except NotFoundError:
        return
    if last.seq:
        await projection.wait_for(last.seq)


class ConfigWriter:
    def __init__(self, js: JetStreamContext, projection: bus.Projection, state: ConfigState) -> None:
        self.js = js
        self.projection = projection
        self.state = state
        self._lock = asyncio.Lock()

    async def write(self, rule: Rule) -> ConfigEvent:
        """Validate (raising `rules.Invalid`) and publish; the same event id on every attempt, so a publish
        whose ack was lost and is retried is stored once."""
        event_id = f"cfg:{uuid.uuid4().hex}"
        async with self._lock:
            for _ in range(ATTEMPTS):
                event = rule(self.state, event_id)
                try:
                    after = self.projection.seq
                    seq = await bus.publish_event(self.js, event, expected_last_subject_seq=after)
                except Exception as exc:
                    if "wrong last sequence" not in str(exc).lower():
                        raise
                    log.info("config_write_raced", kind=type(event).__name__)
                    await config_caught_up(self.js, self.projection)
                    continue
                await self.projection.wait_for(seq)
                log.info("config_written", event_id=event_id, seq=seq)
                return event
        raise WriteConflict("the configuration kept changing during this write; try again")

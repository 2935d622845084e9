"""Panel, conversation and event ids.

SPEC C-12 gives a panel id only four random hex digits per second; at a hundred panels a second across
replicas those collide within seconds. We keep the shape and reserve each id atomically, drawing again on
a clash: a panel id by publishing its first event with `Nats-Expected-Last-Subject-Sequence: 0` (the
seater), a conversation id by creating its key in the `bench_ids` bucket (`shared.bus.reserve_id`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import UTC, datetime

PANEL_RE = re.compile(r"^p\d{8}-\d{6}-[0-9a-f]{4}$")
CONVERSATION_RE = re.compile(r"^r\d{8}-\d{6}-[0-9a-f]{4}$")


def utcnow() -> datetime:
    return datetime.now(UTC)


def candidate_id(prefix: str, now: datetime | None = None) -> str:
    """One draw of `<prefix><YYYYMMDD>-<HHMMSS>-<4 hex>` in UTC (times on the bus are UTC)."""
    now = now or utcnow()
    return f"{prefix}{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def event_id(*parts: str) -> str:
    """A deterministic event id, used as `Nats-Msg-Id` so a retried publish is stored once."""
    return ":".join(parts)


def digest(*parts: str, size: int = 24) -> str:
    h = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    return h[:size]

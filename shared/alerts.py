"""C-16's alerts: their kinds, the key shapes each kind uses, and the keyed record every service folds.

An alert is keyed (`model:paid:<served>`, `connection:held:<conn>`, …) so whoever checks again raises the
same key again and clears it when the problem is gone. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

AlertKind = Literal["retiring", "connection", "went paid", "registration", "retired", "plan"]

# C-16: which key prefixes each kind raises; a key is its prefix plus a served id (or a connection).
KEY_PREFIXES: dict[AlertKind, tuple[str, ...]] = {
    "retiring": ("model:pending:",),
    "connection": ("connection:held:",),
    "went paid": ("model:paid:",),
    "registration": ("model:never-served:", "model:unclassified:"),
    "retired": ("model:gone:", "model:structural:", "model:paywalled:"),
    "plan": ("model:entitlement:",),
}
KINDS: tuple[str, ...] = tuple(KEY_PREFIXES)
PAID_PREFIX = "model:paid:"


def paid_key(served: str) -> str:
    """U-5/CAT-3: the key of the `went paid` alert the free-tier guard looks for."""
    return PAID_PREFIX + served


def paid_hold(
    alerts: Mapping[str, Alert], allow_paid: Collection[str], alias: str, served: str
) -> Alert | None:
    """U-5: the active `went paid` alert that holds this model, or None (no such alert, or `allow_paid` names
    its alias or served id). The guard refuses its calls; the seater does not pick it as an explorer."""
    alert = alerts.get(paid_key(served))
    if alert is None or alert.kind != "went paid" or alias in allow_paid or served in allow_paid:
        return None
    return alert


PENDING_PREFIX = "model:pending:"


def pending_key(served: str) -> str:
    """HL-5/C-16: the key of the `retiring` alert ("<alias> retires in N days unless it answers")."""
    return PENDING_PREFIX + served


def retiring(alerts: Mapping[str, Alert], served: str) -> Alert | None:
    """The model's active `retiring` alert: explorers avoid it (P-7, A-7); a retry that answers clears it."""
    alert = alerts.get(pending_key(served))
    return alert if alert is not None and alert.kind == "retiring" else None


def prefix_of(key: str) -> str | None:
    """The C-16 prefix a key starts with, when something follows it; None for any other shape."""
    for prefixes in KEY_PREFIXES.values():
        for prefix in prefixes:
            if key.startswith(prefix) and len(key) > len(prefix):
                return prefix
    return None


def kind_of(key: str) -> AlertKind | None:
    """The one kind whose keys look like this one (every prefix belongs to exactly one kind)."""
    prefix = prefix_of(key)
    return next((kind for kind, prefixes in KEY_PREFIXES.items() if prefix in prefixes), None)


def served_of(key: str) -> str | None:
    """The served id a `model:*` key names; None for a connection's key or an unknown shape."""
    prefix = prefix_of(key)
    return key[len(prefix):] if prefix is not None and prefix.startswith("model:") else None


@dataclass(frozen=True)
class Alert:
    """One active alert. `by` is who raised it last (`admin`, `catalog`, …), so a check that sweeps clears
    only what it raised itself (K-12 is what happens otherwise)."""

    key: str
    kind: str
    message: str
    action: str
    first_seen: datetime
    last_seen: datetime
    by: str
    alias: str | None = None
    aliases: list[str] = field(default_factory=list)

"""Event → row mapping for the ledger's tables. Pure: no database, so it is tested without one.

A batch of events (in stream order) becomes `Rows`: per table, the rows of that batch, already reduced
to one row per table key with the same rule the store applies across batches (the first seat completion
of a call wins; a panel's fields take their first non-null value). Folding the same events in any
batching therefore gives the same tables: the incremental fold and a rebuild come out identical.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from shared.events import (
    CollectionRemoved,
    CollectionSaved,
    ConfigEvent,
    CooldownStarted,
    EndpointRemoved,
    EndpointSaved,
    EventBase,
    GatewaySettingsSaved,
    ModelRegistered,
    ModelRetired,
    PanelAnswered,
    PanelSeated,
    SeatCompleted,
    VerdictRecorded,
)

# A header whose name says it carries a credential never reaches the ledger, even though no event
# should hold one (endpoint keys live in the callers' environment).
SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.IGNORECASE)
REDACTED = "[redacted]"


class EventRow(NamedTuple):
    """Every stream message folded, once: the audit trail of the fold itself."""

    seq: int
    id: str
    type: str
    at: datetime
    by: str


class PanelRow(NamedTuple):
    """A panel, from its `panel_seated` (the plan) and its `panel_answered` (the call log line, P-16).

    Either event may be missing (a panel still running); a field not known yet is None.
    """

    panel: str
    at: datetime | None
    collection: str | None
    shape: str | None
    shape_by: str | None
    key: str | None
    seats: list[dict[str, str]] | None
    skipped: list[dict[str, str]] | None
    answered_at: datetime | None
    reply: str | None
    system: str | None
    prompt: str | None
    calls: list[str] | None
    note: str | None

    def merged(self, later: PanelRow) -> PanelRow:
        """Each field keeps its first known value; `later` only fills the gaps."""
        pairs = zip(self, later, strict=True)
        return PanelRow._make(mine if mine is not None else theirs for mine, theirs in pairs)


class SeatRow(NamedTuple):
    """One provider call (a seat, a merger, a route turn): the offload and its usage (C-13, L-5)."""

    call: str
    seq: int
    event: str
    at: datetime
    panel: str
    seat: str
    alias: str
    served: str
    endpoint: str
    connection: str
    collection: str
    task: str
    purpose: str
    status: str
    seconds: float
    answer: str
    error: str
    http_status: int | None
    attempts: int
    tokens_in: int
    tokens_out: int
    reasoning: int
    cached: int
    estimated: bool
    caller: str


class VerdictRow(NamedTuple):
    """One verdict event; a call's verdict is its latest row (highest seq)."""

    id: str
    seq: int
    at: datetime
    by: str
    call: str
    alias: str
    useful: bool
    note: str
    real_claims: list[str]
    false_claims: list[str]


class ConfigRow(NamedTuple):
    """One configuration change: what it was about (`name`) and the change itself as JSON."""

    id: str
    seq: int
    at: datetime
    by: str
    type: str
    name: str
    change: str


class CooldownRow(NamedTuple):
    id: str
    seq: int
    at: datetime
    alias: str
    connection: str
    until: datetime
    why: str


@dataclass
class Rows:
    """The rows of one batch, one entry per table key (first wins, panels merged)."""

    events: list[EventRow] = field(default_factory=list)
    panels: dict[str, PanelRow] = field(default_factory=dict)
    seats: dict[str, SeatRow] = field(default_factory=dict)
    verdicts: dict[str, VerdictRow] = field(default_factory=dict)
    config_changes: dict[str, ConfigRow] = field(default_factory=dict)
    cooldowns: dict[str, CooldownRow] = field(default_factory=dict)

    def add(self, seq: int, event: EventBase) -> None:
        self.events.append(EventRow(seq, event.id, _type(event), event.at, event.by))
        if isinstance(event, SeatCompleted):
            self.seats.setdefault(event.call, seat_row(seq, event))
        elif isinstance(event, PanelSeated | PanelAnswered):
            row = panel_row(event)
            known = self.panels.get(row.panel)
            self.panels[row.panel] = known.merged(row) if known else row
        elif isinstance(event, VerdictRecorded):
            self.verdicts.setdefault(event.id, verdict_row(seq, event))
        elif isinstance(event, ConfigEvent):
            self.config_changes.setdefault(event.id, config_row(seq, event))
        elif isinstance(event, CooldownStarted):
            self.cooldowns.setdefault(event.id, cooldown_row(seq, event))


def fold_batch(events: Iterable[tuple[int, EventBase]]) -> Rows:
    """The rows of `(stream sequence, event)` pairs given in stream order."""
    rows = Rows()
    for seq, event in events:
        rows.add(seq, event)
    return rows


def _type(event: EventBase) -> str:
    kind: str = getattr(event, "type", type(event).__name__)
    return kind


def seat_row(seq: int, e: SeatCompleted) -> SeatRow:
    return SeatRow(
        call=e.call, seq=seq, event=e.id, at=e.at, panel=e.panel, seat=e.seat, alias=e.alias, served=e.served,
        endpoint=e.endpoint, connection=e.connection, collection=e.collection, task=e.task, purpose=e.purpose,
        status=e.status, seconds=e.seconds, answer=e.answer, error=e.error, http_status=e.http_status,
        attempts=e.attempts, tokens_in=e.tokens_in, tokens_out=e.tokens_out, reasoning=e.reasoning_tokens,
        cached=e.cached_tokens, estimated=e.tokens_estimated, caller=e.caller,
    )


def panel_row(e: PanelSeated | PanelAnswered) -> PanelRow:
    common = dict(panel=e.panel, collection=e.collection, shape=e.shape, shape_by=e.shape_by, key=e.key)
    if isinstance(e, PanelSeated):
        return PanelRow(
            **common, at=e.at, seats=[s.model_dump() for s in e.seats],
            skipped=[s.model_dump() for s in e.skipped],
            answered_at=None, reply=None, system=None, prompt=None, calls=None, note=None,
        )
    return PanelRow(
        **common, at=None, seats=None, skipped=None, answered_at=e.at, reply=e.reply, system=e.system,
        prompt=e.prompt, calls=list(e.calls), note=e.note,
    )


def verdict_row(seq: int, e: VerdictRecorded) -> VerdictRow:
    return VerdictRow(
        id=e.id, seq=seq, at=e.at, by=e.by, call=e.call, alias=e.alias, useful=e.useful, note=e.note,
        real_claims=list(e.real), false_claims=list(e.false_claims),
    )


def config_name(e: ConfigEvent) -> str:
    """What a configuration change is about: the endpoint, model alias or collection it names."""
    if isinstance(e, EndpointSaved | EndpointRemoved | CollectionSaved | CollectionRemoved):
        return e.name
    if isinstance(e, ModelRegistered | ModelRetired):
        return e.alias
    if isinstance(e, GatewaySettingsSaved):
        return "gateway"
    return ""


def config_change(e: ConfigEvent) -> dict[str, Any]:
    """The change's own fields (not the envelope), with any credential-looking header value redacted."""
    change: dict[str, Any] = e.model_dump(mode="json", by_alias=True, exclude={"id", "v", "at", "by", "type"})
    headers = change.get("headers")
    if isinstance(headers, dict):
        change["headers"] = {k: REDACTED if SECRET_HEADER.search(k) else v for k, v in headers.items()}
    return change


def config_row(seq: int, e: ConfigEvent) -> ConfigRow:
    change = json.dumps(config_change(e), sort_keys=True, separators=(",", ":"))
    return ConfigRow(id=e.id, seq=seq, at=e.at, by=e.by, type=_type(e), name=config_name(e), change=change)


def cooldown_row(seq: int, e: CooldownStarted) -> CooldownRow:
    return CooldownRow(
        id=e.id, seq=seq, at=e.at, alias=e.alias, connection=e.connection, until=e.until, why=e.why
    )

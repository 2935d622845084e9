"""Event → row mapping for the ledger's tables. Pure: no database, so it is tested without one.

A batch of events (in stream order) becomes `Rows`: per table, the rows of that batch, already reduced
to one row per table key with the same rule the store applies across batches (the first seat completion
of a call wins; a panel's fields take their first non-null value; a quota record is the latest one
reported). Folding the same events in any batching therefore gives the same tables: the incremental fold
and a rebuild come out identical.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, get_type_hints

from pydantic import TypeAdapter

from services.ledger.columns import Integer, Json, SeatPlans, Skips, row_type
from shared.commands import UsageLine
from shared.events import (
    AlertCleared,
    AlertRaised,
    CallUsed,
    ConfigEvent,
    CooldownStarted,
    EventBase,
    GatewayKeyCreated,
    GatewaySettingsSaved,
    JobRan,
    LimitLearned,
    PanelAnswered,
    PanelSeated,
    QuotaObserved,
    RouteTurn,
    SeatCompleted,
    SeatPlan,
    Skip,
    SuiteAnswered,
    VerdictRecorded,
)
from shared.failures import failure_class

# A header whose name says it carries a credential never reaches the ledger, even though no event
# should hold one (endpoint keys live in the callers' environment).
SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.IGNORECASE)
REDACTED = "[redacted]"
# How a seat cut by its deadline reads (the caller's and the gateway's words): L-5 calls it a timeout.
NO_ANSWER = "no answer in "


class EventRow(NamedTuple):
    """Every stream message folded, once: the audit trail of the fold itself."""

    seq: int
    id: str
    type: str
    at: datetime
    by: str


class PanelRow(NamedTuple):
    """A panel, from its `panel_seated` (the plan) and its `panel_answered` (the call log line, P-16).

    Either event may be missing (a panel still running); a field not known yet is None. `seq` is the last
    event folded into it, so an incremental export takes a panel again when its answer arrives.
    """

    panel: str
    seq: int
    at: datetime | None
    collection: str | None
    shape: str | None
    shape_by: str | None
    key: str | None
    seats: SeatPlans | None
    skipped: Skips | None
    answered_at: datetime | None
    reply: str | None
    system: str | None
    prompt: str | None
    calls: list[str] | None
    note: str | None

    def merged(self, later: PanelRow) -> PanelRow:
        """Each field keeps its first known value; `later` only fills the gaps (`seq` is the latest)."""
        pairs = zip(self, later, strict=True)
        filled = PanelRow._make(mine if mine is not None else theirs for mine, theirs in pairs)
        return filled._replace(seq=max(self.seq, later.seq))


class SeatRow(NamedTuple):
    """One seat completed (a panel seat, a merger, a route conversation's offload, a probe or shadow seat):
    the offload as C-13 knows it, with how the call went."""

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
    first_token_s: float | None
    answer: str
    error: str
    failure: str | None  # HL-1's class; None when it answered
    http_status: Integer | None
    attempts: Integer
    tokens_in: int
    tokens_out: int
    reasoning: int
    cached: int
    estimated: bool
    caller: str
    served_by: str
    swap: bool
    paced: str
    waited_s: float


# L-5: one provider call, whatever asked for it (a seat's `seat_completed`, a route attempt's or a probe's
# `call_used`): the usage line as the ledger answers it (`shared.commands.UsageLine`, declared there once),
# with the event it was read from after its key. `t` is its start after any pacing wait, `at` when it was
# reported. Never prompts. The fold derives these rows in SQL (`usage_lines`) from the batch's seats and
# `call_used` rows, so no seat is converted for DuckDB twice.
_USAGE_FIELDS = [(name, info.annotation) for name, info in UsageLine.model_fields.items()]
UsageRow = row_type("UsageRow", [_USAGE_FIELDS[0], ("seq", int), ("event", str), *_USAGE_FIELDS[1:]])

# What a usage line is derived from: a seat row's columns of the same names, or a `call_used` event's.
CALL_COLUMNS = (
    "call", "seq", "event", "at", "panel", "alias", "connection", "endpoint", "served", "served_by",
    "swap", "collection", "purpose", "status", "error", "failure", "http_status", "attempts", "tokens_in",
    "tokens_out", "reasoning", "cached", "estimated", "seconds", "first_token_s", "caller", "paced",
    "waited_s",
)
_SEAT_TYPES = get_type_hints(SeatRow, include_extras=True)
# A `call_used` event as a seat row would hold it: held for one batch only, to derive its usage line.
CallUsedRow = row_type("CallUsedRow", [(name, _SEAT_TYPES[name]) for name in CALL_COLUMNS])


class RouteTurnRow(NamedTuple):
    """RM-9: one route-mode turn (the anchor's routes.jsonl line). Never the prompt."""

    id: str
    seq: int
    at: datetime
    conversation: str
    call: str
    collection: str
    key: str
    alias: str
    turn: Integer
    task: str
    status: str
    seconds: float
    first_token_s: float | None
    tool_calls: Integer
    finish: str
    tokens_in: int | None
    tokens_out: int | None
    reasoning: int | None
    tried: list[str]
    error: str


class SuiteAnswerRow(NamedTuple):
    """T-2: one scored suite answer, or its re-scoring (T-5); the answer's text is its `seats` row."""

    id: str
    call: str
    seq: int
    at: datetime
    run: str
    task: str
    alias: str
    shape: str
    draft: bool
    control_of: str
    recall: bool
    kind: str
    reason: str
    found: Integer
    of: Integer
    found_clauses: list[str]
    missed_clauses: list[str]
    invented_clauses: list[str]
    wrong: str
    format_problems: list[str]
    seconds: float


class LimitLearnedRow(NamedTuple):
    """L-3: a limit a provider stated, as the caller learned it (only ever tighter)."""

    id: str
    seq: int
    at: datetime
    alias: str
    connection: str
    axis: str
    allowed: int
    call: str
    why: str


class QuotaRow(NamedTuple):
    """L-4: the latest quota record reported for one connection, model, metric and window."""

    connection: str
    alias: str
    metric: str
    period: str  # minute | hour | day | retry
    seq: int
    event: str
    call: str
    observed_at: datetime
    allowed: int | None
    remaining: int
    reset_at: datetime | None
    source: str


class ProbeRow(NamedTuple):
    """HL-2: one probe call (availability, perf, a confirming call, a retry): how it went, its failure class
    (HL-1) and its throughput. `run` is the job's run id; `kind` the seat label (`probe tiny`, …)."""

    call: str
    seq: int
    at: datetime
    run: str
    job: str
    kind: str
    alias: str
    served: str
    connection: str
    answered: bool
    failure: str | None
    seconds: float
    first_token_s: float | None
    tokens_out: int
    tokens_per_s: float | None
    detail: str  # the provider's words, at most 300 characters


class JobRunRow(NamedTuple):
    """HL-7: one scheduled job's run on one due time (or its would-run in log-only mode)."""

    id: str
    seq: int
    at: datetime
    job: str
    due: datetime
    mode: str
    instance: str
    started: datetime
    catching_up: bool
    took_over: bool
    outcome: str
    summary: str


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
    change: Json


class CooldownRow(NamedTuple):
    id: str
    seq: int
    at: datetime
    alias: str
    connection: str
    until: datetime
    why: str


class AlertRow(NamedTuple):
    """C-16: one alert raised (again) or cleared, by whom. A key's latest row says whether it is up; a
    model's retirement also clears its `model:*` alerts (C-14), which `config_changes` records."""

    id: str
    seq: int
    at: datetime
    by: str
    key: str
    state: str  # raised | cleared
    kind: str | None
    message: str | None
    action: str | None
    alias: str | None
    aliases: list[str] | None


@dataclass
class Rows:
    """The rows of one batch, one entry per table key (first wins, panels merged)."""

    events: list[EventRow] = field(default_factory=list)
    panels: dict[str, PanelRow] = field(default_factory=dict)
    seats: dict[str, SeatRow] = field(default_factory=dict)
    verdicts: dict[str, VerdictRow] = field(default_factory=dict)
    config_changes: dict[str, ConfigRow] = field(default_factory=dict)
    cooldowns: dict[str, CooldownRow] = field(default_factory=dict)
    calls_used: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # CallUsedRow by call
    route_turns: dict[str, RouteTurnRow] = field(default_factory=dict)
    limits_learned: dict[str, LimitLearnedRow] = field(default_factory=dict)
    quota_records: dict[tuple[str, str, str, str], QuotaRow] = field(default_factory=dict)
    alerts: dict[str, AlertRow] = field(default_factory=dict)
    probes: dict[str, ProbeRow] = field(default_factory=dict)
    job_runs: dict[str, JobRunRow] = field(default_factory=dict)
    suite_answers: dict[str, SuiteAnswerRow] = field(default_factory=dict)

    def add(self, seq: int, event: EventBase) -> None:
        self.events.append(EventRow(seq, event.id, _type(event), event.at, event.by))
        handler = handler_for(type(event))
        if handler is not None:
            handler(self, seq, event)

    def _seat_completed(self, seq: int, event: SeatCompleted) -> None:
        self.seats.setdefault(event.call, seat_row(seq, event))
        if event.purpose == "probe":
            self.probes.setdefault(event.call, probe_row(seq, event))

    def _call_used(self, seq: int, event: CallUsed) -> None:
        self.calls_used.setdefault(event.call, call_used_row(seq, event))

    def _panel(self, seq: int, event: PanelSeated | PanelAnswered) -> None:
        row = panel_row(seq, event)
        known = self.panels.get(row.panel)
        self.panels[row.panel] = known.merged(row) if known else row

    def _verdict(self, seq: int, event: VerdictRecorded) -> None:
        self.verdicts.setdefault(event.id, verdict_row(seq, event))

    def _config_change(self, seq: int, event: ConfigEvent) -> None:
        self.config_changes.setdefault(event.id, config_row(seq, event))

    def _alert(self, seq: int, event: AlertRaised | AlertCleared) -> None:
        self._config_change(seq, event)
        self.alerts.setdefault(event.id, alert_row(seq, event))

    def _cooldown(self, seq: int, event: CooldownStarted) -> None:
        self.cooldowns.setdefault(event.id, cooldown_row(seq, event))

    def _route_turn(self, seq: int, event: RouteTurn) -> None:
        self.route_turns.setdefault(event.id, route_turn_row(seq, event))

    def _suite_answered(self, seq: int, event: SuiteAnswered) -> None:
        self.suite_answers.setdefault(event.id, suite_answer_row(seq, event))

    def _limit_learned(self, seq: int, event: LimitLearned) -> None:
        self.limits_learned.setdefault(event.id, limit_learned_row(seq, event))

    def _job_ran(self, seq: int, event: JobRan) -> None:
        self.job_runs.setdefault(event.id, job_run_row(seq, event))

    def _quota_observed(self, seq: int, event: QuotaObserved) -> None:
        for quota in quota_rows(seq, event):  # later reports replace earlier ones
            self.quota_records[(quota.connection, quota.alias, quota.metric, quota.period)] = quota


Handler = Callable[[Rows, int, Any], None]

# One handler per event type: an event whose class (or a base of it, like `ConfigEvent`) is not here adds
# only its `events_applied` row.
HANDLERS: dict[type[EventBase], Handler] = {
    SeatCompleted: Rows._seat_completed,
    CallUsed: Rows._call_used,
    PanelSeated: Rows._panel,
    PanelAnswered: Rows._panel,
    VerdictRecorded: Rows._verdict,
    ConfigEvent: Rows._config_change,
    AlertRaised: Rows._alert,
    AlertCleared: Rows._alert,
    CooldownStarted: Rows._cooldown,
    RouteTurn: Rows._route_turn,
    SuiteAnswered: Rows._suite_answered,
    LimitLearned: Rows._limit_learned,
    QuotaObserved: Rows._quota_observed,
    JobRan: Rows._job_ran,
}


@functools.cache
def handler_for(kind: type[EventBase]) -> Handler | None:
    """The handler of the event's own class, else of its nearest base that has one (once per class: the
    walk up its bases cost a rebuild more than mapping the event's fields)."""
    return next((HANDLERS[base] for base in kind.__mro__ if base in HANDLERS), None)


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
        e.call, seq, e.id, e.at, e.panel, e.seat, e.alias, e.served, e.endpoint, e.connection, e.collection,
        e.task, e.purpose, e.status, e.seconds, e.first_token_s, e.answer, e.error,
        failure_class(e.status, e.error, e.answer), e.http_status, e.attempts, e.tokens_in, e.tokens_out,
        e.reasoning_tokens, e.cached_tokens, e.tokens_estimated, e.caller, e.served_by, e.swap, e.paced,
        e.waited_s,
    )


def call_used_row(seq: int, e: CallUsed) -> tuple[Any, ...]:
    return CallUsedRow(
        call=e.call, seq=seq, event=e.id, at=e.at, panel=e.conversation, alias=e.alias,
        connection=e.connection, endpoint=e.endpoint, served=e.served, served_by=e.served_by, swap=e.swap,
        collection=e.collection, purpose=e.purpose, status=e.status, error=e.error,
        failure=failure_class(e.status, e.error, ""), http_status=e.http_status, attempts=e.attempts,
        tokens_in=e.tokens_in, tokens_out=e.tokens_out, reasoning=e.reasoning_tokens, cached=e.cached_tokens,
        estimated=e.tokens_estimated, seconds=e.seconds, first_token_s=e.first_token_s, caller=e.caller,
        paced=e.paced, waited_s=e.waited_s,
    )


DETAIL_MAX = 300


def probe_row(seq: int, e: SeatCompleted) -> ProbeRow:
    answered = e.status == "ok"
    rate = round(e.tokens_out / e.seconds, 1) if answered and e.seconds > 0 and e.tokens_out else None
    return ProbeRow(
        call=e.call, seq=seq, at=e.at, run=e.panel, job=e.task, kind=e.seat, alias=e.alias, served=e.served,
        connection=e.connection, answered=answered, failure=failure_class(e.status, e.error, e.answer),
        seconds=e.seconds, first_token_s=e.first_token_s, tokens_out=e.tokens_out, tokens_per_s=rate,
        detail=e.error[:DETAIL_MAX],
    )


def job_run_row(seq: int, e: JobRan) -> JobRunRow:
    return JobRunRow(
        id=e.id, seq=seq, at=e.at, job=e.job.value, due=e.due, mode=e.mode, instance=e.instance,
        started=e.started, catching_up=e.catching_up, took_over=e.took_over, outcome=e.outcome,
        summary=e.summary,
    )


def route_turn_row(seq: int, e: RouteTurn) -> RouteTurnRow:
    return RouteTurnRow(
        id=e.id, seq=seq, at=e.at, conversation=e.conversation, call=e.call, collection=e.collection,
        key=e.key, alias=e.alias, turn=e.turn, task=e.task, status=e.status, seconds=e.seconds,
        first_token_s=e.first_token_s, tool_calls=e.tool_calls, finish=e.finish, tokens_in=e.tokens_in,
        tokens_out=e.tokens_out, reasoning=e.reasoning_tokens, tried=list(e.tried), error=e.error,
    )


def suite_answer_row(seq: int, e: SuiteAnswered) -> SuiteAnswerRow:
    return SuiteAnswerRow(
        id=e.id, call=e.call, seq=seq, at=e.at, run=e.run, task=e.task, alias=e.alias, shape=e.shape,
        draft=e.draft, control_of=e.control_of, recall=e.recall, kind=e.kind, reason=e.reason,
        found=len(e.found), of=len(e.found) + len(e.missed), found_clauses=list(e.found),
        missed_clauses=list(e.missed), invented_clauses=list(e.invented), wrong=e.wrong,
        format_problems=list(e.format_problems), seconds=e.seconds,
    )


def limit_learned_row(seq: int, e: LimitLearned) -> LimitLearnedRow:
    return LimitLearnedRow(
        id=e.id, seq=seq, at=e.at, alias=e.alias, connection=e.connection, axis=e.axis, allowed=e.limit,
        call=e.call, why=e.why,
    )


def quota_rows(seq: int, e: QuotaObserved) -> list[QuotaRow]:
    return [
        QuotaRow(
            connection=e.connection, alias=e.alias, metric=r.metric, period=r.window, seq=seq, event=e.id,
            call=e.call, observed_at=e.at, allowed=r.limit, remaining=r.remaining, reset_at=r.reset_at,
            source=r.source,
        )
        for r in e.records
    ]


SEAT_PLANS: TypeAdapter[list[SeatPlan]] = TypeAdapter(list[SeatPlan])
SKIPS: TypeAdapter[list[Skip]] = TypeAdapter(list[Skip])


def panel_row(seq: int, e: PanelSeated | PanelAnswered) -> PanelRow:
    common = dict(collection=e.collection, shape=e.shape, shape_by=e.shape_by, key=e.key)
    if isinstance(e, PanelSeated):
        return PanelRow(
            panel=e.panel, seq=seq, **common, at=e.at, seats=SEAT_PLANS.dump_json(e.seats).decode(),
            skipped=SKIPS.dump_json(e.skipped).decode(),
            answered_at=None, reply=None, system=None, prompt=None, calls=None, note=None,
        )
    return PanelRow(
        panel=e.panel, seq=seq, **common, at=None, seats=None, skipped=None, answered_at=e.at, reply=e.reply,
        system=e.system, prompt=e.prompt, calls=list(e.calls), note=e.note,
    )


def verdict_row(seq: int, e: VerdictRecorded) -> VerdictRow:
    return VerdictRow(
        id=e.id, seq=seq, at=e.at, by=e.by, call=e.call, alias=e.alias, useful=e.useful, note=e.note,
        real_claims=list(e.real), false_claims=list(e.false_claims),
    )


def config_name(e: ConfigEvent) -> str:
    """What a configuration change is about: the model alias it names, else the endpoint, collection,
    connection or gateway key; `gateway` for the gateway's settings."""
    if isinstance(e, GatewaySettingsSaved):
        return "gateway"
    named = getattr(e, "alias", None) or getattr(e, "name", None)
    return named if isinstance(named, str) else ""


def config_change(e: ConfigEvent) -> dict[str, Any]:
    """The change's own fields (not the envelope), with any credential-looking header value and a gateway
    key's hash redacted: the change log never holds what could open a door."""
    change: dict[str, Any] = e.model_dump(mode="json", by_alias=True, exclude={"id", "v", "at", "by", "type"})
    headers = change.get("headers")
    if isinstance(headers, dict):
        change["headers"] = {k: REDACTED if SECRET_HEADER.search(k) else v for k, v in headers.items()}
    if isinstance(e, GatewayKeyCreated):
        change["hash"] = REDACTED
    return change


def config_row(seq: int, e: ConfigEvent) -> ConfigRow:
    change = json.dumps(config_change(e), sort_keys=True, separators=(",", ":"))
    return ConfigRow(id=e.id, seq=seq, at=e.at, by=e.by, type=_type(e), name=config_name(e), change=change)


def alert_row(seq: int, e: AlertRaised | AlertCleared) -> AlertRow:
    if isinstance(e, AlertCleared):
        return AlertRow(id=e.id, seq=seq, at=e.at, by=e.by, key=e.key, state="cleared", kind=None,
                        message=None, action=None, alias=None, aliases=None)
    return AlertRow(id=e.id, seq=seq, at=e.at, by=e.by, key=e.key, state="raised", kind=e.kind,
                    message=e.message, action=e.action, alias=e.alias, aliases=list(e.aliases))


def cooldown_row(seq: int, e: CooldownStarted) -> CooldownRow:
    return CooldownRow(
        id=e.id, seq=seq, at=e.at, alias=e.alias, connection=e.connection, until=e.until, why=e.why
    )

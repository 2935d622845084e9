"""Every event on `BENCH_EVENTS`: one discriminated union, each with a schema version.

An event is a fact that happened. Its `id` is deterministic (it becomes `Nats-Msg-Id`), so the same fact
published twice is stored once, and every fold can skip what it already applied.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, TypeAdapter, field_validator

from shared import subjects
from shared.alerts import AlertKind
from shared.ids import utcnow
from shared.model_facts import FactName, ModelFacts
from shared.scheduled_jobs import JobName, Mode


class EventBase(BaseModel, ABC):
    """Every event: its id (the stream's `Nats-Msg-Id`), schema version, time and author; each kind says
    which subject it is published on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    v: int = 1
    at: datetime = Field(default_factory=utcnow)
    by: str = "system"

    @abstractmethod
    def subject(self) -> str: ...


# ---------------------------------------------------------------- configuration (subject bench.ev.config)


class ConfigEvent(EventBase):
    def subject(self) -> str:
        return subjects.CONFIG


class EndpointSaved(ConfigEvent):
    """Where models are served from. Never carries a key: callers read `BENCHWARMERS_KEY_<NAME>`."""

    type: Literal["endpoint_saved"] = "endpoint_saved"
    name: str
    base: str
    api: Literal["chat", "responses", "anthropic", "gemini"] = "chat"
    kind: Literal["provider", "aggregator", "hub", "local"] = "provider"
    headers: dict[str, str] = Field(default_factory=dict)
    default: bool = False


class EndpointRemoved(ConfigEvent):
    type: Literal["endpoint_removed"] = "endpoint_removed"
    name: str
    # O-5: remove it with its models, which are retired (restorable once the endpoint is back).
    retire_models: bool = False


class ModelRegistered(ConfigEvent):
    type: Literal["model_registered"] = "model_registered"
    alias: str
    served: str
    endpoint: str
    context_window: int | None = None
    max_output: int | None = None
    role: str = "general"
    ad_hoc: bool = False
    vision: bool | None = None
    tools: bool | None = None
    # H-D3 /api/model-options: the model's own call option (P-10); None sends no max_tokens of ours.
    max_tokens: PositiveInt | None = None
    # C-15: facts a catalog gave when it was registered (onboarding's `facts_for`), each with its feed; they
    # are the model's catalog layer until a refresh replaces it. The four fields above are its registration.
    facts: ModelFacts | None = None


class ModelOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    max_tokens: PositiveInt | None = None


class ModelUpdated(ConfigEvent):
    """C-5, C-7, C-8, H-D3: a registered model renamed, given a role, made ad hoc or not, or given call
    options. A field left None keeps its value; a rename moves everything keyed by the alias."""

    type: Literal["model_updated"] = "model_updated"
    alias: str
    new_alias: str | None = None
    role: str | None = None
    ad_hoc: bool | None = None
    options: ModelOptions | None = None


class ModelRestored(ConfigEvent):
    """C-14: a retired model back on its endpoint with its role, ad hoc and options, and back in the
    collections it left that still exist and have room."""

    type: Literal["model_restored"] = "model_restored"
    alias: str


class ModelRetired(ConfigEvent):
    type: Literal["model_retired"] = "model_retired"
    alias: str
    why: str = ""


class CollectionSaved(ConfigEvent):
    type: Literal["collection_saved"] = "collection_saved"
    name: str
    members: list[str]
    shape: str = ""
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    reply: Literal["all", "merged", "route"] = "all"
    merger: str = ""
    # Route mode: models that answer each turn in the background, after the agent has its answer, for
    # evaluation only (recorded as seats with purpose `shadow`).
    shadows: list[str] = Field(default_factory=list)


class CollectionRemoved(ConfigEvent):
    type: Literal["collection_removed"] = "collection_removed"
    name: str


class GatewayKeyCreated(ConfigEvent):
    """SEC-4: a gateway key, as its SHA-256 hex only: the key itself is shown once and never stored.
    `collections` None means every collection; `rpm` None means no cap."""

    type: Literal["gateway_key_created"] = "gateway_key_created"
    name: str
    hash: str
    hint: str
    collections: list[str] | None = None
    rpm: PositiveInt | None = None


class GatewayKeyRevoked(ConfigEvent):
    type: Literal["gateway_key_revoked"] = "gateway_key_revoked"
    name: str


class GatewaySettingsSaved(ConfigEvent):
    type: Literal["gateway_settings_saved"] = "gateway_settings_saved"
    max_calls: int = 5
    max_explorers: int = 2


class LimitsSaved(ConfigEvent):
    """L-1 (a)/(b): the user's limits for a connection (every model on it) or one model alias.

    Replaces that scope's limits; an axis left None has no user limit. rpmo applies per connection only.
    """

    type: Literal["limits_saved"] = "limits_saved"
    scope: Literal["connection", "model"]
    name: str
    rpm: PositiveInt | None = None
    rpd: PositiveInt | None = None
    tpm: PositiveInt | None = None
    tpd: PositiveInt | None = None
    rpmo: PositiveInt | None = None


class ConnectionsSaved(ConfigEvent):
    """connections.json's settings. `allow_paid`: aliases or served ids the free-tier guard (U-5) lets
    through even while a `went paid` alert stands for them. Replaces the list."""

    type: Literal["connections_saved"] = "connections_saved"
    allow_paid: list[str] = Field(default_factory=list)


class ModelLearned(ConfigEvent):
    """HL-3: a capability a probe found (only positives are stored), with where it was learned. A model
    learned to call tools is then known to (`tools: true`), as if its registration had said so."""

    type: Literal["model_learned"] = "model_learned"
    alias: str
    tools: Literal[True] | None = None
    reasoning: Literal[True] | None = None
    source: str = ""  # e.g. `probe 2026-01-04`


class ModelFactsSet(ConfigEvent):
    """C-15: the user's own facts for a model (`bench model set`): the fields in `clear` stop being the
    user's (the catalog's, learned or registered values show through again), then `facts` win per field."""

    type: Literal["model_facts_set"] = "model_facts_set"
    alias: str
    facts: ModelFacts = Field(default_factory=ModelFacts)
    clear: list[FactName] = Field(default_factory=list)


class CatalogApplied(ConfigEvent):
    """CAT-1: a catalog refresh's facts for registered models, by alias, each fact with the feed it came
    from. Replaces those models' catalog layer; published only for models whose catalog facts changed."""

    type: Literal["catalog_applied"] = "catalog_applied"
    refreshed: datetime
    models: dict[str, ModelFacts] = Field(default_factory=dict)


class AlertRaised(ConfigEvent):
    """C-16: an alert raised (or raised again) under its key. Raising a key already up refreshes it
    (`last_seen`, message, action) and keeps its `first_seen`; `by` says who raised it."""

    type: Literal["alert_raised"] = "alert_raised"
    key: str
    kind: AlertKind
    message: str
    action: str = ""
    alias: str | None = None
    aliases: list[str] = Field(default_factory=list)


class AlertCleared(ConfigEvent):
    """C-16: the alert under `key` is over (the check no longer finds it, or someone cleared it)."""

    type: Literal["alert_cleared"] = "alert_cleared"
    key: str


class SchedulerSaved(ConfigEvent):
    """HL-7: the scheduler's mode and the jobs switched off (the rest run at their times). Replaces both;
    its `at` is when the scheduler was last set, so runs due before it are never caught up as missed."""

    type: Literal["scheduler_saved"] = "scheduler_saved"
    mode: Mode
    off: list[JobName] = Field(default_factory=list)


# ---------------------------------------------------------------- panels and seats


class Skip(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    seat: str
    alias: str
    why: str


class SeatPlan(BaseModel):
    """One seat of a panel, as the seater planned it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    call: str
    seat: str  # label: member, explorer, explorer 2, merger
    alias: str
    served: str
    endpoint: str
    connection: str


class PanelSeated(EventBase):
    """The seater's plan. Counted for rotation from this moment (an explorer chosen is 'used' now)."""

    type: Literal["panel_seated"] = "panel_seated"
    panel: str
    collection: str
    shape: str
    shape_by: str
    key: str = "local"
    seats: list[SeatPlan]
    skipped: list[Skip] = Field(default_factory=list)

    def subject(self) -> str:
        return subjects.panel_subject(self.panel)


class ProviderCall(EventBase):
    """What every provider call reports, seat or not (L-5): who answered, how it went, what it cost."""

    call: str
    alias: str
    served: str
    endpoint: str
    connection: str
    collection: str = ""
    status: Literal["ok", "empty", "error"]
    seconds: float
    error: str = ""
    http_status: int | None = None
    attempts: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    tokens_estimated: bool = False
    caller: str = ""
    # U-3: the model the reply named, and whether that is another model than the one registered.
    served_by: str = ""
    swap: bool = False
    # L-2a: "sent" went out at once, "waited" was held by the bench's pacing first, "refused" was not sent.
    paced: Literal["sent", "waited", "refused"] = "sent"
    waited_s: float = 0.0


class SeatCompleted(ProviderCall):
    """One seat's answer and the upstream call's usage (one event per provider call, L-5).

    Published by the caller that made the call, or by the gateway when no caller answered in time;
    its id is `seat:<call>`, so only the first of those is stored.
    """

    type: Literal["seat_completed"] = "seat_completed"
    panel: str
    seat: str
    task: str = ""
    purpose: Literal["panel", "merger", "route", "probe", "shadow", "suite", "decision"] = "panel"
    answer: str = ""
    tool_calls: int = 0  # tool calls the reply made (HL-3's capabilities probe reads it)
    first_token_s: float | None = None  # a streamed reply's first event, seconds after sending (HL-2)

    def subject(self) -> str:
        return subjects.seat_subject(self.call)


class PanelAnswered(EventBase):
    """The panel's call log line (P-16): what was asked and what was answered, images as placeholders."""

    type: Literal["panel_answered"] = "panel_answered"
    panel: str
    collection: str
    shape: str
    shape_by: str
    key: str = "local"
    reply: Literal["all", "merged"] = "all"
    system: str = ""
    prompt: str = ""
    calls: list[str] = Field(default_factory=list)
    note: str = ""

    def subject(self) -> str:
        return subjects.panel_subject(self.panel)


class VerdictRecorded(EventBase):
    """A user's verdict on one call (a seat, a merger or a route conversation)."""

    type: Literal["verdict_recorded"] = "verdict_recorded"
    call: str
    alias: str
    useful: bool
    # The shape of the panel the call sat in, as the ledger folded it ("" for a route conversation): the
    # seater tallies verdicts per shape from this, with no map of every panel it ever seated.
    shape: str = ""
    note: str = ""
    real: list[str] = Field(default_factory=list)
    false_claims: list[str] = Field(default_factory=list, alias="false")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def subject(self) -> str:
        return subjects.verdict_subject(self.call)


class CooldownStarted(EventBase):
    """A model rests after a rate limit (L-3) until `until`: no explorer seat, ranked last in route mode."""

    type: Literal["cooldown_started"] = "cooldown_started"
    alias: str
    connection: str
    until: datetime
    why: str = ""

    def subject(self) -> str:
        return subjects.limit_subject(self.connection)


class LimitLearned(EventBase):
    """L-3: a limit a provider stated in an error text, stored only when tighter than what was known."""

    type: Literal["limit_learned"] = "limit_learned"
    alias: str
    connection: str
    axis: Literal["rpm", "rpd", "tpm", "tpd", "context"]
    limit: PositiveInt
    call: str = ""
    why: str = ""

    def subject(self) -> str:
        return subjects.limit_subject(self.connection)


class QuotaRecord(BaseModel):
    """L-4: one quota a provider reported (headers, a 429 body), with its reset as absolute UTC."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    metric: Literal["requests", "tokens", "input_tokens", "output_tokens"]
    window: str  # minute, hour, day, or "retry" (a Retry-After with no window named)
    limit: int | None = None
    remaining: int
    reset_at: datetime | None = None
    source: str


class QuotaObserved(EventBase):
    """L-4/L-7: the quota records one call's reply carried; the callers enforce them until their reset."""

    type: Literal["quota_observed"] = "quota_observed"
    alias: str
    connection: str
    call: str = ""
    records: list[QuotaRecord]

    def subject(self) -> str:
        return subjects.limit_subject(self.connection)


class CallUsed(ProviderCall):
    """The usage of one provider call that is not a panel seat (a route turn's attempt, later probes): L-5."""

    type: Literal["call_used"] = "call_used"
    conversation: str = ""
    purpose: Literal["route", "probe", "shadow", "listing"] = "route"
    first_token_s: float | None = None

    def subject(self) -> str:
        return subjects.usage_subject(self.connection)


class RouteTurn(EventBase):
    """One route-mode turn (RM-9): who answered, how, what was tried. Never the prompt."""

    type: Literal["route_turn"] = "route_turn"
    conversation: str
    call: str  # the conversation's offload call of the member that answered, `<conv>.<n>` ("" if none)
    collection: str
    key: str = "local"
    alias: str = ""  # "" when every member failed
    turn: int
    task: str = ""  # first user message, at most 90 chars
    status: Literal["ok", "empty", "error"]
    seconds: float
    first_token_s: float | None = None
    tool_calls: int = 0
    finish: str = ""
    tokens_in: int | None = None
    tokens_out: int | None = None
    reasoning_tokens: int | None = None
    tried: list[str] = Field(default_factory=list)
    error: str = ""

    def subject(self) -> str:
        return subjects.route_subject(self.conversation)


class JobRan(EventBase):
    """HL-7: a scheduled job's run on one due time (or, in log-only mode, that it would have run). Its id
    names the job and the due time, so a run resumed by another replica after a death is recorded once."""

    type: Literal["job_ran"] = "job_ran"
    job: JobName
    due: datetime
    mode: Literal["log-only", "run"]
    instance: str
    started: datetime
    catching_up: bool = False
    took_over: bool = False
    # `skipped`: a suite job found another suite pass running on its prober (one at a time, T-6).
    outcome: Literal["done", "would run", "skipped", "failed", "timed out"]
    summary: str = ""

    @field_validator("outcome", mode="before")
    @classmethod
    def _older_outcome(cls, value: object) -> object:
        """Runs stored by older probers as `not built` (a job whose work was missing) read as `failed`."""
        return "failed" if value == "not built" else value

    def subject(self) -> str:
        return subjects.job_subject(self.job)


class MissingModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    endpoint: str
    served: str
    alias: str
    since: datetime  # the first check that found it missing, in a row


class ServedChecked(EventBase):
    """HL-4: each endpoint's listing compared with what is registered on it. `unreachable` endpoints kept
    their models as present; `missing` carries over `since` from the check before, so HL-5's 3-days-missing
    rule reads it from the latest check alone."""

    type: Literal["served_checked"] = "served_checked"
    listed: dict[str, int] = Field(default_factory=dict)  # endpoint → how many models it listed
    unreachable: dict[str, str] = Field(default_factory=dict)  # endpoint → why
    missing: list[MissingModel] = Field(default_factory=list)

    def subject(self) -> str:
        return subjects.SERVED_CHECKS


class SuiteAnswered(EventBase):
    """One suite task asked of one model and scored (T-2, T-3): the answer itself is its seat's
    `seat_completed` (purpose `suite`, same call id). A non-answer (`kind` error/refused/timeout) has no
    score. `recall` says whether it counts toward routing recall (T-5)."""

    type: Literal["suite_answered"] = "suite_answered"
    run: str
    call: str
    task: str
    alias: str
    shape: str
    draft: bool = False
    control_of: str = ""
    recall: bool = False
    kind: Literal["answered", "error", "refused", "timeout"]
    reason: str = ""
    found: list[str] = Field(default_factory=list)
    missed: list[str] = Field(default_factory=list)
    invented: list[str] = Field(default_factory=list)
    wrong: str = ""  # T-5's "confidently wrong" kind when something was invented: false alarm, wrong line, …
    format_problems: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    def subject(self) -> str:
        return subjects.suite_subject(self.call)


class OnboardProgress(EventBase):
    """O-1: one onboarding item moved (queued, a step begun, or its end), published by the prober running
    it; `remaining` counts the items still queued or running after this one, so a watcher knows when the
    batch is over. Never carries a key."""

    type: Literal["onboard_progress"] = "onboard_progress"
    item: str
    served: str
    endpoint: str
    mode: str
    state: str
    step: int = 0
    alias: str = ""
    note: str = ""
    instance: str = ""
    attempt: int = 0
    remaining: int = 0

    def subject(self) -> str:
        return subjects.onboard_subject(self.item)


Event = Annotated[
    EndpointSaved
    | EndpointRemoved
    | ModelRegistered
    | ModelRetired
    | ModelUpdated
    | ModelRestored
    | ModelLearned
    | ModelFactsSet
    | CatalogApplied
    | GatewayKeyCreated
    | GatewayKeyRevoked
    | CollectionSaved
    | CollectionRemoved
    | GatewaySettingsSaved
    | LimitsSaved
    | ConnectionsSaved
    | AlertRaised
    | AlertCleared
    | SchedulerSaved
    | PanelSeated
    | SeatCompleted
    | PanelAnswered
    | VerdictRecorded
    | CooldownStarted
    | CallUsed
    | RouteTurn
    | SuiteAnswered
    | LimitLearned
    | QuotaObserved
    | JobRan
    | ServedChecked
    | OnboardProgress,
    Field(discriminator="type"),
]

ConfigEvents = (
    EndpointSaved,
    EndpointRemoved,
    ModelRegistered,
    ModelRetired,
    CollectionSaved,
    CollectionRemoved,
    GatewaySettingsSaved,
    LimitsSaved,
    ModelUpdated,
    ModelRestored,
    ModelLearned,
    ModelFactsSet,
    CatalogApplied,
    GatewayKeyCreated,
    GatewayKeyRevoked,
    ConnectionsSaved,
    AlertRaised,
    AlertCleared,
    SchedulerSaved,
)

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def decode_event(data: bytes) -> Event:
    return EVENT_ADAPTER.validate_json(data)


def encode_event(event: EventBase) -> bytes:
    return event.model_dump_json(by_alias=True).encode()

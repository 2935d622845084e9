"""The admin API's request and reply bodies, as FastAPI documents them in its OpenAPI schema.

Requests are strict (no coercion, no unknown field); the meaning of each field (names, ranges, what must
exist) is checked by the rules modules, which list every reason at once. Replies say `ok: true`; every
refusal is an `ErrorReply`.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr

from shared.alerts import KEY_PREFIXES, KINDS, Alert
from shared.catalog.discover import DiscoverRow
from shared.commands import (
    FeedStatus,
    JudgedClaim,
    KnownLimits,
    QuotaLine,
    RankLine,
    ReportLine,
    Rescored,
    RestingLine,
    SentLine,
    SuiteModelLine,
    SuiteShapeLine,
    SuiteWrongLine,
    UsageLine,
)
from shared.config_rules.base import COLLECTION_SHAPES, ROLES
from shared.model_facts import CUTOFF_RE, FactName
from shared.scheduled_jobs import JobName, Mode

Api = Literal["chat", "responses", "anthropic", "gemini"]
Kind = Literal["provider", "aggregator", "hub", "local"]
Reply = Literal["all", "merged", "route"]


def one_of(*choices: str) -> Any:
    """A choice the rules check (a wrong one is reported with every other reason), shown as an enum."""
    return Field(default=None, json_schema_extra={"enum": [*choices, None]})


def whole(value: Any) -> Any:
    """JSON says 3.0 is the integer 3 (as JSON Schema reads it); any other value is left to the checks."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


Whole = Annotated[int, BeforeValidator(whole)]


def shaped(default: Any = ..., description: str | None = None, **constraints: Any) -> Any:
    """A field whose shape the rules check (so a wrong value is reported with every other reason), shown in
    the document so a client knows what it may send."""
    return Field(default=default, description=description, json_schema_extra=constraints)


NAME = r"^[a-z0-9][a-z0-9-]{1,31}$"  # collections, endpoints, gateway keys (rules.NAME_RE)
ALIAS = r"^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$"  # rules.ALIAS_RE
ONE_LINE = r"^[ -~]*[!-~][ -~]*$"  # printable text, not only spaces (the rules take any printable Unicode)
PREFIXES = "|".join(p for ps in KEY_PREFIXES.values() for p in ps)
ALERT_KEY = rf"^({PREFIXES})[!-~]+$"
TAG = r"^[a-z0-9][a-z0-9-]{0,23}$"  # rules.TAG_RE
POSITIVE: dict[str, Any] = {"minimum": 1}


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Ok(BaseModel):
    ok: Literal[True] = True


class ErrorReply(BaseModel):
    ok: Literal[False] = False
    errors: list[str]


REFUSALS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorReply, "description": why}
    for status, why in (
        (400, "refused, with every reason"), (401, "sign in first"), (403, "not for this Host or Origin"),
        (404, "no such thing"),
        (409, "not in that state now (a name taken, …), or the configuration kept changing"),
        (413, "body too large"), (415, "not JSON"), (503, "a service this needs is not running"),
    )
}


# ---------------------------------------------------------------- endpoints


class EndpointBody(Body):
    name: str = shaped(pattern=NAME)
    base: str
    api: str | None = one_of("chat", "responses", "anthropic", "gemini")
    kind: str | None = one_of("provider", "aggregator", "hub", "local")
    headers: dict[str, str] | None = None
    default: bool | None = None
    test: bool = Field(default=False, description="list the endpoint's models and save nothing")
    key: SecretStr | None = Field(default=None, description="never accepted: keys live with the callers")


class EndpointName(Body):
    name: str = shaped(pattern=NAME)


class EndpointRemoveBody(Body):
    name: str = shaped(pattern=NAME)
    with_models: bool = Field(default=False, description="retire the models on it (restorable later)")


class EndpointView(BaseModel):
    name: str
    base: str
    api: Api
    kind: Kind
    headers: dict[str, str]
    default: bool
    key_variable: str
    models: int
    key_set: bool | None = Field(default=None, description="whether the callers hold its key (null: unknown)")


class Listing(BaseModel):
    """What the callers found at the endpoint's `/models`."""

    count: int
    models: list[str]
    key_set: bool | None
    note: str


class EndpointReply(Ok):
    endpoint: EndpointView | None = None
    listing: Listing
    saved: bool


class EndpointKeyReply(Ok):
    name: str
    stored: Literal[False] = False
    key_variable: str
    key_set: bool | None
    message: str


class EndpointsReply(Ok):
    endpoints: list[EndpointView]
    default_endpoint: str | None


class EndpointSavedReply(Ok):
    endpoint: EndpointView


class RemovedReply(Ok):
    removed: str
    retired: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- models


class ModelRegisterBody(Body):
    served: str = shaped(pattern=r"^[!-~]{1,200}$")
    endpoint: str = shaped(pattern=NAME)
    alias: str | None = shaped(None, pattern=ALIAS)
    context_window: Whole | None = shaped(None, **POSITIVE)
    max_output: Whole | None = shaped(None, **POSITIVE)
    role: str | None = one_of("", *ROLES)
    ad_hoc: bool | None = None
    vision: bool | None = None
    tools: bool | None = None


class ModelChangeBody(Body):
    alias: str = shaped(pattern=ALIAS)
    new_alias: str | None = shaped(None, pattern=ALIAS)
    new_role: str | None = one_of(*ROLES)
    new_ad_hoc: bool | None = None


class ModelOptionsBody(Body):
    alias: str = shaped(pattern=ALIAS)
    max_tokens: Whole | None = shaped(minimum=1, maximum=1_000_000)


class RetireBody(Body):
    alias: str = shaped(pattern=ALIAS)
    reason: str | None = shaped(None, maxLength=500)


class AliasBody(Body):
    alias: str = shaped(pattern=ALIAS)


class LastProbe(BaseModel):
    at: datetime
    answered: bool
    failure: str | None


class ModelView(BaseModel):
    alias: str
    served: str
    endpoint: str
    kind: Literal["chat", "decision"]
    role: str
    ad_hoc: bool
    context_window: int | None
    max_output: int | None
    max_tokens: int | None
    vision: bool | None
    tools: bool | None
    connection: str
    status: str  # healthy | failing | cooling | retiring | untested | retired
    why: str
    last_probe: LastProbe | None = None
    retired: bool
    retired_at: datetime | None = None
    retired_why: str | None = None
    retired_from: dict[str, list[str]] | None = None


class ModelsReply(Ok):
    models: list[ModelView]
    renamed: dict[str, str]


class ModelReply(Ok):
    model: ModelView


class RetiredReply(Ok):
    retired: dict[str, Any]


class CostBody(Body):
    input: float = shaped(minimum=0, maximum=1_000_000)
    output: float = shaped(minimum=0, maximum=1_000_000)


class ModelFactsBody(Body):
    """C-15: the user's own facts for a model; each wins over every other source until cleared."""

    alias: str = shaped(pattern=ALIAS)
    context_window: Whole | None = shaped(None, **POSITIVE)
    max_output: Whole | None = shaped(None, **POSITIVE)
    tools: bool | None = None
    vision: bool | None = None
    structured_output: bool | None = None
    reasoning: bool | None = None
    cost: CostBody | None = shaped(None, description="US dollars per million tokens")
    knowledge_cutoff: str | None = shaped(None, pattern=CUTOFF_RE.pattern)
    clear: list[FactName] | None = None


class FactLine(BaseModel):
    fact: FactName
    value: Any = None
    source: str | None = None  # a feed, `registration`, `learned <date>`, `probe <date>` or `you`


class ModelFactsReply(Ok):
    alias: str
    served: str
    endpoint: str
    facts: list[FactLine]
    catalog_refreshed: datetime | None = None


# ---------------------------------------------------------------- collections and settings


class CollectionBody(Body):
    name: str = shaped(pattern=NAME)
    members: list[str] | None = None
    add: list[str] | None = Field(default=None, description="members to add after the others")
    remove: list[str] | None = Field(default=None, description="members to take out")
    description: str | None = shaped(None, maxLength=300)
    shape: str | None = one_of("", *COLLECTION_SHAPES)
    tags: list[str] | None = shaped(None, maxItems=8, items={"type": "string", "pattern": TAG})
    reply: str | None = one_of("all", "merged", "route")
    merger: str | None = None
    shadows: list[str] | None = Field(
        default=None, description="route mode: models that answer each turn in the background, for evaluation"
    )


class CollectionName(Body):
    name: str = shaped(pattern=NAME)


class CollectionView(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    members: list[str]
    shape: str
    description: str
    tags: list[str]
    reply: Reply
    merger: str
    shadows: list[str]
    explorers: int
    together: dict[str, Any]


class Settings(BaseModel):
    max_calls: int
    max_explorers: int


class CollectionsReply(Ok):
    collections: list[CollectionView]
    settings: Settings
    shapes: list[str]
    models: list[str]


class CollectionReply(Ok):
    collection: CollectionView


class CollectionRemovedReply(Ok):
    removed: str


class SettingsBody(Body):
    max_calls: Whole | None = shaped(None, type="integer", minimum=1, maximum=10)  # left out, not null
    max_explorers: Whole | None = shaped(None, type="integer", minimum=0, maximum=2)


class SettingsReply(Ok):
    settings: Settings


# ---------------------------------------------------------------- limits (L-1)


class LimitValues(Body):
    rpm: Whole | None = shaped(None, **POSITIVE)
    rpd: Whole | None = shaped(None, **POSITIVE)
    tpm: Whole | None = shaped(None, **POSITIVE)
    tpd: Whole | None = shaped(None, **POSITIVE)
    rpmo: Whole | None = shaped(None, **POSITIVE)


class ConnectionLimitsBody(Body):
    connection: str = shaped(pattern=NAME)
    limits: LimitValues


class ModelLimitValues(LimitValues):
    rpmo: int | None = shaped(None, "a connection's limit only: leave it out", **{"not": {}})


class ModelLimitsBody(Body):
    alias: str = shaped(pattern=ALIAS)
    limits: ModelLimitValues


class Limits(BaseModel):
    rpm: int | None = None
    rpd: int | None = None
    tpm: int | None = None
    tpd: int | None = None
    rpmo: int | None = None


class ConnectionRow(BaseModel):
    name: str
    models: list[str]
    limits: Limits


class ModelLimitRow(BaseModel):
    alias: str
    limits: Limits


class ConnectionsReply(Ok):
    keys: list[str]
    connections: list[ConnectionRow]
    models: list[ModelLimitRow]


class LimitsReply(Ok):
    scope: Literal["connection", "model"]
    name: str
    limits: Limits


# ---------------------------------------------------------------- alerts (C-16) and the free-tier guard (U-5)


class AlertBody(Body):
    key: str = shaped(description="model:paid:<served>, model:pending:<served>, connection:held:<conn>, …",
                      pattern=ALERT_KEY, maxLength=300)
    kind: str | None = one_of(*KINDS)
    message: str = shaped(pattern=ONE_LINE, maxLength=300)
    action: str | None = shaped(None, pattern=ONE_LINE, maxLength=300)
    alias: str | None = None
    aliases: list[str] | None = None


class AlertsReply(Ok):
    alerts: list[Alert]


class AlertReply(Ok):
    alert: Alert


class AlertClearedReply(Ok):
    cleared: str


class AllowPaidBody(Body):
    allow_paid: list[str] = shaped(description="aliases or served ids called even on a `went paid` alert",
                                   maxItems=200, items={"type": "string", "pattern": r"^[!-~]{1,200}$"})


class AllowPaidReply(Ok):
    allow_paid: list[str]


# ---------------------------------------------------------------- gateway keys (SEC-4)


class KeyCreateBody(Body):
    name: str = shaped(pattern=r"^(?!local$)[a-z0-9][a-z0-9-]{1,31}$")
    collections: list[str] | None = None
    rpm: Whole | None = shaped(None, minimum=1, maximum=10_000)


class KeyName(Body):
    name: str = shaped(pattern=NAME)


class KeyView(BaseModel):
    name: str
    hint: str
    collections: list[str] | None
    rpm: int | None
    created: datetime
    last_used: str | None


class KeysReply(Ok):
    required: bool
    keys: list[KeyView]


class KeyCreatedReply(Ok):
    name: str
    key: str = Field(description="shown once: only its SHA-256 is kept")
    hint: str
    collections: list[str] | None
    rpm: int | None


class KeyRevokedReply(Ok):
    revoked: str


# ---------------------------------------------------------------- status and change log


class Onboarding(BaseModel):
    running: bool
    items: int


class StatusReply(Ok):
    version: str
    gateway: str
    data: str
    models: int
    decision_models: int
    retired: int
    collections: int
    endpoints: int
    default_endpoint: str | None
    client: str
    scheduler: str
    scheduler_jobs: dict[str, bool]
    auth: bool
    keys_required: bool
    gateway_keys: int
    onboarding: Onboarding
    config_seq: int


class Change(BaseModel):
    seq: int
    at: datetime
    by: str
    kind: str
    name: str
    field: str
    old: Any = None
    new: Any = None


class ChangesReply(Ok):
    changes: list[Change]


class LoginBody(Body):
    token: str


class RebuildReply(Ok):
    model_config = ConfigDict(extra="allow")


# ---------------------------------------------------------------- the ledger's views (L-5, L-7)

# A query the ledger had to stop is refused with 408; the other refusals are everyone's.
SQL_REFUSALS: dict[int | str, dict[str, Any]] = {
    **REFUSALS, 408: {"model": ErrorReply, "description": "the query ran too long and was stopped"},
}


class QuotaReply(Ok):
    """L-7: live quota records, what was sent per connection (24 h, this UTC month), resting models and
    the known limits, as the ledger folded them at `at`."""

    at: datetime
    quotas: list[QuotaLine]
    sent: list[SentLine]
    resting: list[RestingLine]
    limits: KnownLimits


class UsageReply(Ok):
    """L-5: one row per provider call, newest first; never a prompt."""

    rows: list[UsageLine]


class ReportReply(Ok):
    """`bench report`: offload seats per model and per collection that completed in [since, until)."""

    since: datetime
    until: datetime
    models: list[ReportLine]
    collections: list[ReportLine]


class SqlBody(Body):
    sql: str = Field(description="one SELECT (or WITH … SELECT) over the ledger's tables")
    max_rows: Whole = Field(default=1000, ge=1, le=10_000)


class SqlReply(Ok):
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    truncated: bool = Field(description="more rows matched than max_rows (or than a reply may carry)")


class RetryReply(Ok):
    alias: str
    answered: bool
    status: str  # ok | empty | error | unanswered (no caller answered in time)
    failure: str | None
    seconds: float | None
    error: str
    cleared: bool  # its `retiring` alert was cleared


# ---------------------------------------------------------------- the scheduler (HL-7)


JOB_LIST: dict[str, Any] = {"items": {"type": "string", "enum": [j.value for j in JobName]}}


class SchedulerBody(Body):
    mode: str = Field(json_schema_extra={"enum": [m.value for m in Mode]},
                      description="off, log-only (say what would run) or run")
    off: list[str] | None = Field(default=None, description="jobs to switch off",
                                  json_schema_extra=JOB_LIST)
    on: list[str] | None = Field(default=None, description="jobs to switch back on",
                                 json_schema_extra=JOB_LIST)


class SchedulerView(BaseModel):
    mode: str
    jobs: dict[str, bool]
    source: Literal["config", "environment"]
    since: str | None


class SchedulerReply(Ok):
    scheduler: SchedulerView


class SuiteRunBody(BaseModel):
    """T-6: a model by alias, or the schedule's choice (`next`: paid or free); one task by id (drafts too)."""

    model_config = ConfigDict(extra="forbid")
    model: str = Field(default="", max_length=200)
    task: str = Field(default="", max_length=200)
    next: Literal["", "paid", "free"] = ""


class SuiteResultBody(BaseModel):
    task: str
    kind: str
    found: list[str]
    missed: list[str]
    invented: list[str]
    wrong: str
    reason: str
    seconds: float


class SuiteRunReplyBody(Ok):
    run: str
    alias: str
    results: list[SuiteResultBody]
    refused: list[str]
    skipped: list[str]


class SuiteResultsReplyBody(Ok):
    """T-5 from the latest answer per model and task: per model (routing recall, confidently wrong), per
    model and shape, and each confidently wrong answer, newest first."""

    models: list[SuiteModelLine]
    shapes: list[SuiteShapeLine]
    wrong: list[SuiteWrongLine]


class RankReplyBody(Ok):
    """RM-3, P-15, T-5: route mode's order for a new conversation (without the explore-first draw), each
    member with its evidence, the merger candidates and the router's primary."""

    collection: str
    route: list[RankLine]
    mergers: list[str]
    primary: str | None


class JudgedClaimsReplyBody(Ok):
    """T-4: calls whose latest verdict names real or false claims, with the prompt their panel logged."""

    rows: list[JudgedClaim]


class RescoreReplyBody(Ok):
    """T-5: the scores that changed when the latest answers were scored again."""

    changed: list[Rescored]


# ---------------------------------------------------------------- recent panels and one seat (P-17, H-D4)

CALL_ID = r"^p\d{8}-\d{6}-[0-9a-f]{4}\.[a-z]+\d*$"  # shared.transcripts.CALL_ID, whole


class PanelSeat(BaseModel):
    call: str
    seat: str
    alias: str
    status: str
    seconds: float
    owed: bool = Field(description="the ledger still waits for this seat's verdict")


class PanelView(BaseModel):
    panel: str
    at: datetime | None
    collection: str
    seats: list[PanelSeat]


class PanelsReply(Ok):
    """The latest panels, newest first, each seat with its status and whether its verdict is owed."""

    panels: list[PanelView]
    owed: list[str]


class SeatView(BaseModel):
    call: str
    alias: str
    status: str
    answer: str
    error: str
    prompt: str = Field(description="the panel's prompt, at most 20,000 characters")
    useful: bool | None = Field(description="its latest verdict (null: none yet)")
    note: str
    real: list[str]
    false: list[str]


class SeatReply(Ok):
    seat: SeatView
# ---------------------------------------------------------------- the catalog (CAT-1..CAT-4)


class CatalogStatusReply(Ok):
    """Each feed: fetched or the shipped snapshot, when, its last error; and when a refresh last changed a
    model's facts."""

    feeds: list[FeedStatus]
    refreshed: datetime | None = None


class CatalogRefreshBody(Body):
    force: bool | None = shaped(None, description="refetch feeds younger than 20 hours too (default true)")


class CatalogRefreshReplyBody(Ok):
    feeds: list[FeedStatus]
    changed: list[str]
    raised: list[str]
    cleared: list[str]


class DiscoverReply(Ok):
    """CAT-4: models worth adding, free and new first, with their reach from this bench."""

    rows: list[DiscoverRow]
    baseline: date | None = None  # the first build: its rows are never new

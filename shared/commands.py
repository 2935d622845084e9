"""Commands and request/reply messages on the bus (not facts: nothing folds them).

`SeatCall` is the callers' work item on the `BENCH_CALLS` work queue; the rest are core-NATS
request/reply bodies between services.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from shared.events import SeatPlan, Skip


class Msg(BaseModel):
    """A canonical chat message (OpenAI chat shape; content is a string or a list of OpenAI parts)."""

    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None


# A conversation's messages read and written in one pass (an agent's turn carries 80 of them: half the
# time of one model per message).
MESSAGES: TypeAdapter[list[Msg]] = TypeAdapter(list[Msg])


class SeatCall(BaseModel):
    """One provider call to make. Carries no secret: the caller reads the endpoint's key itself."""

    model_config = ConfigDict(extra="forbid")
    call: str
    panel: str
    seat: str
    alias: str
    served: str
    endpoint: str
    base: str
    api: str = "chat"
    headers: dict[str, str] = Field(default_factory=dict)
    connection: str
    collection: str = ""
    task: str = ""
    purpose: Literal["panel", "merger", "route", "probe", "shadow", "suite", "decision"] = "panel"
    messages: list[Msg]
    options: dict[str, Any] = Field(default_factory=dict)
    deadline: float  # epoch seconds (UTC); no answer by then is `no answer in <n>s`
    timeout_s: float = 420.0
    retries: int = 2
    # The gateway's config position when it built the call: the caller folds at least this far before
    # deciding it (free-tier guard, user limits). 0: no position given, decide at once.
    config_seq: int = 0


# P-4's shape picker: the seater waits this long for the decision model's answer (through a caller), and
# this much more for a caller's word; a plan that asks the picker takes that much longer.
PICK_TIMEOUT_S = 15.0
PICK_GRACE_S = 2.0
PICK_TEXT_LIMIT = 20_000


def picker_text(system: str, prompt: str) -> str:
    """P-4: what the shape picker reads, the system and the prompt text a blank line apart, cut short."""
    return "\n\n".join(part for part in (system, prompt) if part)[:PICK_TEXT_LIMIT]


class PlanRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    collection: str
    with_: list[str] = Field(default_factory=list, alias="with")
    has_images: bool = False
    estimate: int = 0
    # What the shape picker is asked about (P-4, `picker_text`); empty when the asker has none.
    text: str = Field(default="", max_length=PICK_TEXT_LIMIT)
    key: str = "local"
    reply: Literal["all", "merged"] = "all"
    # The asker's config position: the seater folds at least this far before planning (read-your-writes
    # without a round trip to the stream).
    config_seq: int = 0

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PlanRefusal(BaseModel):
    status: int
    message: str


class MergerCandidate(BaseModel):
    """A model that may merge a panel (P-15), with what the gateway needs to call it and to check its size."""

    model_config = ConfigDict(extra="forbid")
    alias: str
    served: str
    endpoint: str
    connection: str
    context_window: int | None = None


class Plan(BaseModel):
    """The seater's answer: the panel id and every seat, or a refusal with its HTTP status. A merged
    panel's plan also lists its merger candidates, best first."""

    model_config = ConfigDict(extra="forbid")
    panel: str = ""
    collection: str = ""
    shape: str = ""
    shape_by: str = ""
    members: int = 0
    explorers: int = 0
    seats: list[SeatPlan] = Field(default_factory=list)
    skipped: list[Skip] = Field(default_factory=list)
    mergers: list[MergerCandidate] = Field(default_factory=list)
    refusal: PlanRefusal | None = None


class VerdictRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    call: str
    useful: bool
    note: str | None = None
    real: list[str] | None = None
    false_claims: list[str] | None = Field(default=None, alias="false")
    by: str = "local"


class RpcError(BaseModel):
    """A refusal inside a reply the ledger's SQL view builds; on the wire every failure is `shared.rpc`'s."""

    status: int
    message: str


class VerdictReply(BaseModel):
    recorded: dict[str, Any] | None = None


class PendingRequest(BaseModel):
    calls: list[str]


class PendingReply(BaseModel):
    pending: list[str]


class RecordRequest(BaseModel):
    collection: str
    task: str = ""


class RecordReply(BaseModel):
    collection: str
    task: str
    aliases: dict[str, dict[str, Any]]


class ModelsRequest(BaseModel):
    """C-3: list what an endpoint serves. Answered by a caller, the only process holding the key."""

    model_config = ConfigDict(extra="forbid")
    endpoint: str
    base: str
    api: Literal["chat", "responses", "anthropic", "gemini"] = "chat"
    headers: dict[str, str] = Field(default_factory=dict)
    models_url: str = ""


class ListedModel(BaseModel):
    id: str
    name: str = ""
    context_window: int | None = None
    max_output: int | None = None


class ModelsReply(BaseModel):
    models: list[ListedModel] = Field(default_factory=list)


class RouteCall(BaseModel):
    """One member's attempt at a route-mode turn (RM-5): the OpenAI chat body and where to relay the stream.

    Taken over request/reply on `bench.rpc.caller.route` (queue `callers`): the caller answers at once with
    `RouteAccepted`, then publishes `RelayFrame`s on `relay` (core NATS, in order, numbered) and one
    `CallUsed` event. Carries no secret.
    """

    model_config = ConfigDict(extra="forbid")
    call: str  # the usage id of this upstream call: `<conversation>.t<turn>.<attempt>`
    conversation: str
    turn: int
    alias: str
    served: str
    endpoint: str
    base: str
    api: str = "chat"
    headers: dict[str, str] = Field(default_factory=dict)
    connection: str
    collection: str
    # OpenAI chat request fields (messages, tools, tool_choice, …); the caller sets model and stream
    body: dict[str, Any]
    relay: str
    first_piece_s: float = 90.0  # RM-6: silence this long before any text or tool call fails the member
    deadline: float  # epoch seconds: the whole turn's deadline (600 s)
    retries: int = 0  # RM-6: non-last members get none, the last gets the usual 2
    config_seq: int = 0  # as `SeatCall.config_seq`: the caller folds this far before deciding the call


class RouteAccepted(BaseModel):
    """A caller took the call (a malformed one is refused with a 400 instead)."""

    caller: str = ""


class RelayUsage(BaseModel):
    tokens_in: int = 0
    tokens_out: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False


class RelayOutcome(BaseModel):
    """How the member's call ended (the same classification as a seat: U-3)."""

    status: Literal["ok", "empty", "error"]
    error: str = ""
    http_status: int | None = None
    finish_reason: str = ""
    usage: RelayUsage = Field(default_factory=RelayUsage)
    served_by: str = ""
    attempts: int = 0
    paced: str = "sent"
    seconds: float = 0.0
    first_piece_s: float | None = None


# A caller beats on a relay this often while its call runs, so a gateway hears a dead caller within a few
# beats instead of at the turn's deadline (invariant 3).
RELAY_BEAT_S = 2.0
RELAY_SILENCE_S = 3 * RELAY_BEAT_S + 1.0


class RelayFrame(BaseModel):
    """One message on a relay subject. `chunks` are OpenAI `chat.completion.chunk`s as the member sent them
    (or, for non-chat APIs, as the caller translated them), in order: all those one read of the member's
    reply held, so a turn is a few frames, not one per chunk. The last frame is `end` or `fail`, with any
    chunks still held before its outcome."""

    seq: int
    kind: Literal["chunks", "beat", "end", "fail"]
    chunks: list[dict[str, Any]] = Field(default_factory=list)
    outcome: RelayOutcome | None = None


class TurnNeeds(BaseModel):
    """What a route turn asks of a member (RM-2), as the gateway measured the request: tools offered or
    used, images carried, and its size estimate (messages, tool calls and definitions, 2,500 per image)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tools: bool = False
    images: int = 0
    estimate: int = 0


class RouteRequest(BaseModel):
    """The gateway asks the seater who takes a route turn (RM-2..RM-4): what the request needs and where its
    conversation stands. The seater decides who is eligible and the order they are tried in."""

    model_config = ConfigDict(extra="forbid")
    collection: str
    needs: TurnNeeds = Field(default_factory=TurnNeeds)
    current: str = ""  # the conversation's model; "" for a new conversation (or one nobody answered yet)
    previous: list[str] = Field(default_factory=list)  # the order the conversation's last turn walked
    config_seq: int = 0


class RouteSeat(BaseModel):
    """A model that may answer a route turn (a member) or shadow it, and what the gateway needs to call it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    alias: str
    served: str
    endpoint: str
    connection: str
    max_output: int | None = None  # its known output limit: a client's max_tokens is capped to it
    max_tokens: int | None = None  # the model's own call option (P-10)


class RouteSeating(BaseModel):
    """The seater's answer: the order to walk (best first, RM-3; the conversation's model first, RM-4), the
    seat of every eligible member, every member left out with why, and the collection's shadow seats."""

    order: list[str] = Field(default_factory=list)
    seats: list[RouteSeat] = Field(default_factory=list)
    skipped: list[Skip] = Field(default_factory=list)
    shadows: list[RouteSeat] = Field(default_factory=list)
    # The seater's word on reuse: a decision it made without the rotation or a draw (a conversation's model
    # kept first, nobody too small) is the same for every request that differs only in its size, as long as
    # the size stays within `fits_up_to` (the smallest known window of those seated; None: no window known).
    # A gateway may answer such a request from it while the configuration is unchanged (RM-4).
    reusable: bool = False
    fits_up_to: int | None = None

    def seat(self, alias: str) -> RouteSeat:
        return next(s for s in self.seats if s.alias == alias)


# ---------------------------------------------------------------- the ledger's own state


class LedgerStatusRequest(BaseModel):
    """How far the ledger has folded, and its row counts. Nothing to ask."""

    model_config = ConfigDict(extra="forbid")


class LedgerStatus(BaseModel):
    seq: int
    rows: dict[str, int]


class RebuildRequest(BaseModel):
    """Throw the tables away and fold the whole stream again. Nothing to ask."""

    model_config = ConfigDict(extra="forbid")


class Rebuilt(BaseModel):
    ok: bool = True
    events: int
    seconds: float


# ---------------------------------------------------------------- the ledger's views (L-5, L-7)


class QuotaRequest(BaseModel):
    """L-7: the quota view. Nothing to ask: the ledger answers as of now."""

    model_config = ConfigDict(extra="forbid")


class QuotaLine(BaseModel):
    """One live quota record (L-4): what is left of it now (its `remaining` less what was sent since it
    was reported; the whole `of` once it has reset), when it resets, and where it came from."""

    connection: str
    alias: str
    metric: str
    window: str
    left: int | None
    of: int | None
    resets: datetime | None
    source: str
    observed_at: datetime
    age_s: int


class SentCount(BaseModel):
    requests: int = 0  # HTTP requests sent (attempts; a refused call sent none)
    tokens: int = 0  # tokens in + out


class SentLine(BaseModel):
    """What the bench sent one connection: the last 24 hours and this UTC month (L-7, from the usage)."""

    connection: str
    day: SentCount
    month: SentCount


class RestingLine(BaseModel):
    """A model resting after a rate limit (L-3) and whether the wait was the provider's or the default."""

    alias: str
    connection: str
    until: datetime
    minutes_left: int
    wait: Literal["stated", "default"]


class UserLimit(BaseModel):
    """L-1 (a)/(b): the user's limits for a connection or one model alias (an axis not set is None)."""

    scope: Literal["connection", "model"]
    name: str
    rpm: int | None = None
    rpd: int | None = None
    tpm: int | None = None
    tpd: int | None = None
    rpmo: int | None = None
    at: datetime
    by: str


class LearnedLimit(BaseModel):
    """L-3: the tightest limit a provider stated for a model, when and where (the call) it was learned.
    `enforced` is false where the user set that axis for the model (the user's wins)."""

    alias: str
    connection: str
    axis: str
    limit: int
    date: str
    where: str
    enforced: bool


class KnownLimits(BaseModel):
    user: list[UserLimit] = Field(default_factory=list)
    learned: list[LearnedLimit] = Field(default_factory=list)


class QuotaReply(BaseModel):
    at: datetime
    quotas: list[QuotaLine] = Field(default_factory=list)
    sent: list[SentLine] = Field(default_factory=list)
    resting: list[RestingLine] = Field(default_factory=list)
    limits: KnownLimits = Field(default_factory=KnownLimits)


class UsageRequest(BaseModel):
    """L-5: the latest usage lines, newest first, narrowed by connection, alias, purpose and start time."""

    model_config = ConfigDict(extra="forbid")
    connection: str = ""
    alias: str = ""
    purpose: str = ""
    since: datetime | None = None  # a time without a zone is UTC
    limit: int = Field(default=100, ge=1, le=1000)


class UsageLine(BaseModel):
    """One provider call (L-5): a row of the ledger's `usage` table, whose columns are these fields. `t` is
    its start after any pacing wait; never a prompt."""

    call: str
    t: datetime
    at: datetime
    panel: str
    alias: str
    connection: str
    endpoint: str
    served: str
    served_by: str
    swap: bool
    collection: str
    purpose: str
    status: str
    failure: str | None = None  # HL-1's class; None when it answered
    http_status: int | None
    attempts: int
    tokens_in: int
    tokens_out: int
    reasoning: int
    cached: int
    estimated: bool
    seconds: float
    first_token_s: float | None
    caller: str
    paced: str
    waited_s: float


class UsageReply(BaseModel):
    rows: list[UsageLine] = Field(default_factory=list)


class SqlRequest(BaseModel):
    """Read-only analytics over the ledger's tables: one SELECT (or WITH … SELECT) statement."""

    model_config = ConfigDict(extra="forbid")
    sql: str
    max_rows: int = Field(default=1000, ge=1, le=10000)


class SqlReply(BaseModel):
    ok: bool = True
    columns: list[str] = Field(default_factory=list)
    types: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = False  # more rows than max_rows matched
    error: RpcError | None = None


# ---------------------------------------------------------------- report and export


class Price(BaseModel):
    """What a model costs per million tokens; the ledger holds no prices, so a report is told them."""

    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    output: float = Field(ge=0)


class ReportRequest(BaseModel):
    """Offload seats (panel, merger, route) that started in [since, until), per model and per collection."""

    model_config = ConfigDict(extra="forbid")
    since: datetime
    until: datetime
    prices: dict[str, Price] = Field(default_factory=dict)  # alias → price


class ReportLine(BaseModel):
    """One model's (or collection's) seats in the period. Latency is over the seats that answered."""

    name: str
    seats: int
    answered: int
    judged: int
    useful: int
    useful_rate: float | None  # useful / judged
    judged_share: float  # judged / seats
    p50_s: float | None
    p95_s: float | None
    tokens_in: int
    tokens_out: int
    cost: float | None  # None when a price of one of its models is unknown
    failures: dict[str, int]  # HL-1 class → seats


class ReportReply(BaseModel):
    since: datetime
    until: datetime
    models: list[ReportLine] = Field(default_factory=list)
    collections: list[ReportLine] = Field(default_factory=list)


class ExportRequest(BaseModel):
    """`bench ledger export`: each table's rows folded after its mark (the highest `seq` an earlier export
    took), and only those of `since` (a UTC day) or later when given."""

    model_config = ConfigDict(extra="forbid")
    after: dict[str, int] = Field(default_factory=dict)
    since: date | None = None


class ExportedFile(BaseModel):
    path: str  # <table>/day=<YYYY-MM-DD>/part-<export>-<n>.parquet, relative to the export
    bytes: int


class ExportReply(BaseModel):
    """One export's Parquet files, written by the ledger in its export folder (fetched by chunks)."""

    export: str
    at: datetime
    since: date | None = None
    marks: dict[str, int]  # each table's highest seq in the export's snapshot: the next export's `after`
    rows: dict[str, int]  # rows written per table (tables with none left out)
    files: list[ExportedFile] = Field(default_factory=list)


class ExportChunkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    export: str
    path: str
    offset: int = Field(default=0, ge=0)


class ExportChunkReply(BaseModel):
    data: str  # base64: a NATS message carries text safely, and a chunk stays well under 1 MB
    eof: bool


# ---------------------------------------------------------------- pacing history (L-2)

# How the callers' windows keep what was sent (`bench_limits`): entries younger than PACING_EXACT_S stay
# exact (the minute windows need them), older ones share PACING_BUCKET_S buckets stamped with the bucket's
# end. The ledger's pacing history comes back in the same shape, so it merges into the windows as is.
PACING_EXACT_S = 120.0
PACING_BUCKET_S = 60.0

# (t epoch seconds, alias, attempts, tokens in + out, call id; "" for a bucket of several calls)
PacingRow = tuple[float, str, int, int, str]


class PacingRequest(BaseModel):
    """L-2: what the bench sent one connection, for a caller whose windows start counting only now."""

    model_config = ConfigDict(extra="forbid")
    connection: str


class PacingReply(BaseModel):
    """The connection's usage of the last 24 hours as of `at` (every alias; refused calls sent nothing):
    exact rows with their call id for the calls that ended within the last PACING_EXACT_S (and a margin),
    minute buckets for the rest; and the requests it was sent in the UTC month `month` (rpmo)."""

    at: float = 0.0
    rows: list[PacingRow] = Field(default_factory=list)
    month: str = ""  # YYYY-MM
    month_requests: int = 0


# ---------------------------------------------------------------- health evidence (HL-5)


class EvidenceRequest(BaseModel):
    """What the auto-retire rules weigh, since a time: probe rows, each model's latest answered offload,
    and when each model was last restored."""

    model_config = ConfigDict(extra="forbid")
    since: datetime


class EvidenceLine(BaseModel):
    alias: str
    at: datetime
    answered: bool
    failure: str | None = None
    detail: str = ""
    probe: bool = True  # False: the model's latest answered offload (panel, merger, route, shadow, suite)


class EvidenceReply(BaseModel):
    rows: list[EvidenceLine] = Field(default_factory=list)
    restored: dict[str, datetime] = Field(default_factory=dict)


# ---------------------------------------------------------------- suite passes (T-6)


class SuiteRunRequest(BaseModel):
    """One suite pass: a model by alias, or the schedule's choice (`next`: paid or free); one task by id
    (drafts too), else at most six chosen by T-6."""

    model_config = ConfigDict(extra="forbid")
    model: str = ""
    task: str = ""
    next: Literal["", "paid", "free"] = ""


class SuiteResult(BaseModel):
    task: str
    kind: str
    found: list[str] = Field(default_factory=list)
    missed: list[str] = Field(default_factory=list)
    invented: list[str] = Field(default_factory=list)
    wrong: str = ""
    reason: str = ""
    seconds: float = 0.0


class SuiteRunReply(BaseModel):
    run: str = ""
    alias: str
    results: list[SuiteResult] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)  # "<task>: <field>: <reason>": tasks that did not load
    skipped: list[str] = Field(default_factory=list)  # tasks with a missing attachment


class SuiteResultsRequest(BaseModel):
    """T-5: what the suite says about each model (one model when `alias` is given)."""

    model_config = ConfigDict(extra="forbid")
    alias: str = ""


class SuiteModelLine(BaseModel):
    """A model's latest answer per task, summed: `found`/`of` over the tasks that count for routing recall
    (T-5), every answered task in `answered`, and how many of those asserted an invention."""

    alias: str
    answered: int
    found: int
    of: int
    recall: float | None
    confidently_wrong: int
    last: datetime


class SuiteShapeLine(BaseModel):
    alias: str
    shape: str
    answered: int
    found: int
    of: int
    confidently_wrong: int


class SuiteWrongLine(BaseModel):
    """One confidently wrong answer: a false alarm, a wrong line, a wrong verdict or a trap."""

    alias: str
    task: str
    wrong: str
    invented: list[str]
    call: str
    at: datetime


class SuiteResultsReply(BaseModel):
    models: list[SuiteModelLine] = Field(default_factory=list)
    shapes: list[SuiteShapeLine] = Field(default_factory=list)
    wrong: list[SuiteWrongLine] = Field(default_factory=list)


# ---------------------------------------------------------------- why a collection ranks as it does


class RankRequest(BaseModel):
    """`bench collection rank NAME`: route mode's order for a new conversation and the merger candidates,
    each member with the evidence that put it there (RM-3, P-15, T-5)."""

    model_config = ConfigDict(extra="forbid")
    collection: str


class RankLine(BaseModel):
    alias: str
    place: int
    useful: int
    judged: int
    findings: int
    recall: float | None
    suite_answers: int
    confidently_wrong: int
    resting: bool
    why: str


class RankReply(BaseModel):
    collection: str
    route: list[RankLine] = Field(default_factory=list)
    mergers: list[str] = Field(default_factory=list)
    primary: str | None = None  # the router's primary for the collection's shape (T-5), member or not


class JudgedClaimsRequest(BaseModel):
    """T-4 (`bench suite mine`): calls whose latest verdict names real or false claims, with their prompt."""

    model_config = ConfigDict(extra="forbid")
    limit: int = Field(default=200, ge=1, le=2000)


class JudgedClaim(BaseModel):
    call: str
    alias: str
    prompt: str
    real: list[str]
    false: list[str]


class JudgedClaimsReply(BaseModel):
    rows: list[JudgedClaim] = Field(default_factory=list)


class RescoreRequest(BaseModel):
    """T-5: score every model's latest answer per task again, from the stored answer."""

    model_config = ConfigDict(extra="forbid")


class Rescored(BaseModel):
    alias: str
    task: str
    call: str
    before: str
    after: str


class RescoreReply(BaseModel):
    changed: list[Rescored] = Field(default_factory=list)


# ---------------------------------------------------------------- the catalog (CAT-1..CAT-4)


class FeedStatus(BaseModel):
    """One feed as the catalog holds it: from the feed or the shipped snapshot, its age and last error."""

    feed: str
    source: str
    fetched: datetime | None = None
    age_s: float | None = None
    tried: datetime | None = None
    error: str = ""
    models: int = 0


class CatalogRefreshRequest(BaseModel):
    """A refresh now (`bench catalog refresh`); `force` refetches feeds younger than CAT-2's 20 hours."""

    model_config = ConfigDict(extra="forbid")
    force: bool = True


class CatalogRefreshReply(BaseModel):
    feeds: list[FeedStatus] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)  # aliases whose catalog facts changed
    raised: list[str] = Field(default_factory=list)  # `went paid` keys raised
    cleared: list[str] = Field(default_factory=list)  # `went paid` keys cleared

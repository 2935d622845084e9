"""Every stream, subject and KV bucket name on the bus, defined once.

Event subjects are `bench.ev.<category>...`; the category token lets a projection filter what it folds.
Call ids contain one dot (`<panel>.member1`), so they take two subject tokens.
"""

EVENTS_STREAM = "BENCH_EVENTS"
EVENTS_ALL = "bench.ev.>"

# Configuration: one subject, so a writer can demand the last sequence it validated against
# (`Nats-Expected-Last-Subject-Sequence`) and two concurrent writers never both win.
CONFIG = "bench.ev.config"
PANEL_PREFIX = "bench.ev.panel"
SEAT_PREFIX = "bench.ev.seat"
VERDICT_PREFIX = "bench.ev.verdict"
USAGE_PREFIX = "bench.ev.usage"
LIMIT_PREFIX = "bench.ev.limit"
# T-2: one scored suite answer per task asked, `bench.ev.suite.<run>.<n>` like a seat's call id.
SUITE_PREFIX = "bench.ev.suite"

CALLS_STREAM = "BENCH_CALLS"
CALLS_ALL = "bench.calls.>"
CALLS_PREFIX = "bench.calls"
CALLERS_CONSUMER = "callers"

RPC_SEATER_PLAN = "bench.rpc.seater.plan"
RPC_LEDGER_VERDICT = "bench.rpc.ledger.verdict"
RPC_LEDGER_PENDING = "bench.rpc.ledger.pending"
RPC_LEDGER_RECORD = "bench.rpc.ledger.record"
RPC_LEDGER_REBUILD = "bench.rpc.ledger.rebuild"
RPC_LEDGER_STATUS = "bench.rpc.ledger.status"
# L-7 and L-5 views, and read-only analytics SQL over the ledger's tables.
RPC_LEDGER_QUOTA = "bench.rpc.ledger.quota"
RPC_LEDGER_USAGE = "bench.rpc.ledger.usage"
RPC_LEDGER_SQL = "bench.rpc.ledger.sql"
# T-5: the suite's scores per model and shape, and the confidently wrong answers.
RPC_LEDGER_SUITE = "bench.rpc.ledger.suite"
# T-4: judged claims with the prompt they were judged on, for mining claim tasks.
RPC_LEDGER_CLAIMS = "bench.rpc.ledger.claims"
# L-2: a connection's sent history, for a caller seeding its pacing windows when a limit starts to bind.
RPC_LEDGER_PACING = "bench.rpc.ledger.pacing"
# HL-5: the prober's auto-retire evidence (probe rows, latest answers, restores).
RPC_LEDGER_EVIDENCE = "bench.rpc.ledger.evidence"
# `bench report`: seats, useful rate, latency, tokens, cost and failures per model and collection.
RPC_LEDGER_REPORT = "bench.rpc.ledger.report"
# `bench ledger export`: the tables' new rows as Parquet in the ledger's export folder, then their bytes.
RPC_LEDGER_EXPORT = "bench.rpc.ledger.export"
RPC_LEDGER_EXPORT_CHUNK = "bench.rpc.ledger.export_chunk"
# Only callers hold provider keys, so a provider's model list (C-3) is fetched by a caller.
RPC_CALLER_MODELS = "bench.rpc.caller.models"
# T-6: a suite pass now (`bench suite run`), run by a prober like its scheduled ones.
RPC_PROBER_SUITE = "bench.rpc.prober.suite"
# T-5: every latest suite answer scored again with today's tasks and scorer.
RPC_PROBER_RESCORE = "bench.rpc.prober.rescore"
# O-1..O-4: the onboarding queue (queue, status, stop, clear) and the candidates, kept by the probers.
RPC_PROBER_ONBOARD = "bench.rpc.prober.onboard"

# CAT-1..CAT-4: a catalog refresh now (`bench catalog refresh`), run by a prober like its daily job.
RPC_PROBER_CATALOG = "bench.rpc.prober.catalog"

# Every service answers a ping here (`bench up` waits on it while the stack starts).
HEALTH_PREFIX = "bench.rpc.health"


def health_subject(service: str) -> str:
    return f"{HEALTH_PREFIX}.{service}"


SEATER_QUEUE = "seaters"
LEDGER_QUEUE = "ledger"
CALLER_QUEUE = "callers"
PROBER_QUEUE = "probers"

IDS_BUCKET = "bench_ids"
# L-2: each connection's request/token windows and quota records, taken with compare-and-set by every caller.
LIMITS_BUCKET = "bench_limits"
# SEC-4: each gateway key's last minute of requests (its rpm cap, counted across every gateway replica with
# compare-and-set) and when it was last used.
KEY_RATES_BUCKET = "bench_key_rates"
# MCP-3: which seats each agent session was already reminded of (`pending_verdicts`), so a session is told
# once per seat whichever gateway replica its Stop hook reaches.
REMINDERS_BUCKET = "bench_reminders"
# HL-7: one record per scheduled job (its last claimed due time, who holds it, until when), claimed with
# compare-and-set so a due job runs on exactly one prober replica.
JOBS_BUCKET = "bench_jobs"
# CAT-2/CAT-4: each catalog feed's cached entries with their age and last error, and Discover's first-seen
# dates; written by the prober's refresh, read by the gateway (catalog status, Discover). No secret in it.
CATALOG_BUCKET = "bench_catalog"
# O-3: the onboarding queue, one compare-and-set document every prober replica shares: its items, who runs
# the current one and until when (a lease), the issues of models that stopped, the dismissed candidates.
ONBOARD_BUCKET = "bench_onboard"
# O-1: one onboarding item's progress (queued, each step, its end), `bench.ev.onboard.<item>`.
ONBOARD_PREFIX = "bench.ev.onboard"
# HL-7: a scheduled job's run (or, in log-only mode, its would-run), as the ledger keeps it.
JOB_PREFIX = "bench.ev.job"
# HL-4: the deprecations job's served check (each endpoint's listing against what is registered on it).
SERVED_CHECKS = f"{JOB_PREFIX}.served-check"


def panel_subject(panel: str) -> str:
    return f"{PANEL_PREFIX}.{panel}"


def seat_subject(call: str) -> str:
    """`<panel>.member1` → `bench.ev.seat.<panel>.member1`."""
    return f"{SEAT_PREFIX}.{call}"


def seats_of_panel(panel: str) -> str:
    return f"{SEAT_PREFIX}.{panel}.*"


def suite_subject(call: str) -> str:
    return f"{SUITE_PREFIX}.{call}"


def verdict_subject(call: str) -> str:
    return f"{VERDICT_PREFIX}.{call}"


def usage_subject(connection: str) -> str:
    return f"{USAGE_PREFIX}.{connection or 'unknown'}"


def job_subject(job: str) -> str:
    return f"{JOB_PREFIX}.{job}"


def onboard_subject(item: str) -> str:
    return f"{ONBOARD_PREFIX}.{item}"


def call_subject(call: str) -> str:
    return f"{CALLS_PREFIX}.{call}"


def limit_subject(connection: str) -> str:
    return f"{LIMIT_PREFIX}.{connection or 'unknown'}"


LIMITS_ALL = f"{LIMIT_PREFIX}.>"

# Route mode (SPEC RM-*): one member's streamed turn, relayed from a caller to the asking gateway.
RPC_SEATER_ROUTE = "bench.rpc.seater.route"
# Why a collection's members rank as they do (`bench collection rank`), from the seater's own fold.
RPC_SEATER_RANK = "bench.rpc.seater.rank"
RPC_CALLER_ROUTE = "bench.rpc.caller.route"
RELAY_PREFIX = "bench.relay"
CANCEL_SUFFIX = ".cancel"
ROUTE_PREFIX = "bench.ev.route"
CONVERSATIONS_BUCKET = "bench_conversations"


def relay_subject(instance: str, token: str) -> str:
    """Where a caller relays one route call's frames: core NATS, to the one gateway that asked. The
    instance is one token (a host name's dots become `_`), so `bench.relay.*.*` matches every relay and
    `bench.relay.*.*.cancel` every cancel, in subscriptions and in the bus permissions alike."""
    return f"{RELAY_PREFIX}.{instance.replace('.', '_')}.{token}"


def relay_cancel_subject(relay: str) -> str:
    """The gateway publishes here when it gives up on a member (failover): the caller stops the call."""
    return f"{relay}{CANCEL_SUFFIX}"


def relay_of_cancel(subject: str) -> str:
    """The relay a cancel subject stops."""
    return subject.removesuffix(CANCEL_SUFFIX)


def route_subject(conversation: str) -> str:
    return f"{ROUTE_PREFIX}.{conversation}"

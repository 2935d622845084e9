"""Who may do what on the bus: the permission matrix, written once, from which the server's config is made.

Every process connects as one *role* (its service's name, or `supervisor` for `bench up`'s health pings,
or `admin` for an operator). A role may publish and subscribe only to the subjects listed here; the
nats-server enforces it (docs/architecture.md shows the matrix). JetStream is reached through its API
subjects, so each role also lists the streams it reads, the consumers it drives and the buckets it writes.

Replies need no grant: a server answers a request on its reply subject (`allow_responses`), and each role
receives on its own inbox prefix (`_INBOX.<role>`), so no role can read another's replies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from shared import subjects

JS_API = "$JS.API"
KV_STREAM_PREFIX = "KV_"
INBOX_ROOT = "_INBOX"
SERVICES = ("gateway", "seater", "caller", "prober", "ledger")
# `bench up` pings each service's health subject while it starts them, and nothing else.
SUPERVISOR = "supervisor"
# An operator's (and the tests') full access: its seed is made with the others and mounted nowhere.
ADMIN = "admin"
ROLES = (*SERVICES, SUPERVISOR, ADMIN)
# Streams (and buckets' streams) any service may create when they are missing; only the owner changes one.
STREAMS = (subjects.EVENTS_STREAM, subjects.CALLS_STREAM)
BUCKETS = (
    subjects.IDS_BUCKET, subjects.LIMITS_BUCKET, subjects.CONVERSATIONS_BUCKET, subjects.KEY_RATES_BUCKET,
    subjects.REMINDERS_BUCKET,
    subjects.JOBS_BUCKET, subjects.CATALOG_BUCKET, subjects.ONBOARD_BUCKET,
)
STREAM_OWNER = "ledger"


def inbox_prefix(role: str) -> str:
    """Where a role's replies arrive: its own branch of `_INBOX`, which no other role may subscribe to."""
    return INBOX_ROOT if role == ADMIN else f"{INBOX_ROOT}.{role}"


def kv_stream(bucket: str) -> str:
    return f"{KV_STREAM_PREFIX}{bucket}"


@dataclass(frozen=True)
class Grant:
    """One role's allow lists: anything not listed is refused by the server."""

    publish: tuple[str, ...] = ()
    subscribe: tuple[str, ...] = ()

    def __add__(self, other: Grant) -> Grant:
        return Grant(self.publish + other.publish, self.subscribe + other.subscribe)


def reads_stream(stream: str) -> Grant:
    """Ordered consumers (projections, KV watches) and single-message reads of a stream."""
    return Grant(publish=(
        f"{JS_API}.STREAM.INFO.{stream}",
        f"{JS_API}.CONSUMER.CREATE.{stream}",
        f"{JS_API}.CONSUMER.CREATE.{stream}.>",
        f"{JS_API}.CONSUMER.INFO.{stream}.*",
        f"{JS_API}.CONSUMER.DELETE.{stream}.*",
        f"{JS_API}.STREAM.MSG.GET.{stream}",
        f"{JS_API}.DIRECT.GET.{stream}",
        f"{JS_API}.DIRECT.GET.{stream}.>",
        # An ordered consumer's flow control asks the client to answer on this stream's `$JS.FC` subjects.
        f"$JS.FC.{stream}.>",
    ))


def uses_bucket(bucket: str) -> Grant:
    """Read, watch and write one KV bucket (puts and compare-and-set go to `$KV.<bucket>.<key>`)."""
    return reads_stream(kv_stream(bucket)) + Grant(publish=(f"$KV.{bucket}.>",))


def pulls_work(stream: str, durable: str) -> Grant:
    """Drive one durable pull consumer: create it, ask for messages, ack, nak and extend them."""
    return Grant(publish=(
        f"{JS_API}.STREAM.INFO.{stream}",
        f"{JS_API}.CONSUMER.CREATE.{stream}.{durable}",
        f"{JS_API}.CONSUMER.CREATE.{stream}.{durable}.>",
        f"{JS_API}.CONSUMER.DURABLE.CREATE.{stream}.{durable}",
        f"{JS_API}.CONSUMER.INFO.{stream}.{durable}",
        f"{JS_API}.CONSUMER.MSG.NEXT.{stream}.{durable}",
        f"$JS.ACK.{stream}.{durable}.>",
    ))


def provisions(owner: bool) -> Grant:
    """Every service creates what is missing at start (safe, idempotent); only the owner updates a stream."""
    names = (*STREAMS, *(kv_stream(b) for b in BUCKETS))
    grant = Grant(publish=tuple(f"{JS_API}.STREAM.INFO.{n}" for n in names)
                  + tuple(f"{JS_API}.STREAM.CREATE.{n}" for n in names))
    if owner:
        grant += Grant(publish=tuple(f"{JS_API}.STREAM.UPDATE.{n}" for n in names))
    return grant


def service_base(service: str) -> Grant:
    """What every service needs: its inbox, its health ping, and creating missing streams and buckets."""
    return Grant(subscribe=(f"{inbox_prefix(service)}.>", subjects.health_subject(service))) + provisions(
        service == STREAM_OWNER
    )


EVENTS = subjects.EVENTS_STREAM
RELAY_FRAMES = subjects.relay_subject("*", "*")
RELAY_CANCELS = subjects.relay_cancel_subject(RELAY_FRAMES)
LEDGER_RPC = f"{subjects.RPC_LEDGER_VERDICT.rsplit('.', 1)[0]}.*"

GRANTS: dict[str, Grant] = {
    # Speaks every API format and MCP: writes config (behind the admin guard), queues seat calls, records
    # panels, route turns and a seat's completion no caller made; asks the seater, the ledger and the callers;
    # remembers which seats each agent session was reminded of; reads the catalog's feeds (status, Discover).
    "gateway": service_base("gateway") + reads_stream(EVENTS) + uses_bucket(subjects.IDS_BUCKET)
    + uses_bucket(subjects.CONVERSATIONS_BUCKET) + uses_bucket(subjects.KEY_RATES_BUCKET)
    + uses_bucket(subjects.REMINDERS_BUCKET) + reads_stream(kv_stream(subjects.CATALOG_BUCKET)) + Grant(
        publish=(
            subjects.CONFIG, f"{subjects.PANEL_PREFIX}.>", f"{subjects.SEAT_PREFIX}.>",
            f"{subjects.ROUTE_PREFIX}.>", subjects.CALLS_ALL,
            subjects.RPC_SEATER_PLAN, subjects.RPC_SEATER_ROUTE, subjects.RPC_SEATER_RANK, LEDGER_RPC,
            subjects.RPC_CALLER_MODELS, subjects.RPC_CALLER_ROUTE, RELAY_CANCELS, subjects.RPC_PROBER_SUITE,
            subjects.RPC_PROBER_RESCORE, subjects.RPC_PROBER_CATALOG,
            subjects.RPC_PROBER_ONBOARD,
        ),
        subscribe=(f"{subjects.SEAT_PREFIX}.>", RELAY_FRAMES, f"{subjects.ONBOARD_PREFIX}.>"),
    ),
    # Plans panels and route turns from its fold; records who was seated; queues the shape picker's question
    # for the callers and hears its completion (P-4).
    "seater": service_base("seater") + reads_stream(EVENTS) + uses_bucket(subjects.IDS_BUCKET) + Grant(
        publish=(f"{subjects.PANEL_PREFIX}.>", subjects.CALLS_ALL),
        subscribe=(subjects.RPC_SEATER_PLAN, subjects.RPC_SEATER_ROUTE, subjects.RPC_SEATER_RANK,
                   f"{subjects.SEAT_PREFIX}.>"),
    ),
    # The only holder of provider keys: takes seat calls from the work queue, lists models for the gateway,
    # streams route turns back to the gateway that asked, records seats, usage and learned limits.
    "caller": service_base("caller") + reads_stream(EVENTS) + uses_bucket(subjects.LIMITS_BUCKET)
    + pulls_work(subjects.CALLS_STREAM, subjects.CALLERS_CONSUMER) + Grant(
        publish=(
            f"{subjects.SEAT_PREFIX}.>", f"{subjects.USAGE_PREFIX}.>", f"{subjects.LIMIT_PREFIX}.>",
            subjects.RPC_LEDGER_PACING, RELAY_FRAMES,
        ),
        subscribe=(subjects.RPC_CALLER_MODELS, subjects.RPC_CALLER_ROUTE, RELAY_CANCELS),
    ),
    # Between requests (HL-1..HL-7, T-6): claims due jobs in `bench_jobs`, queues probe and suite calls for
    # the callers and hears their completions, asks callers for endpoint listings (HL-4) and the ledger for
    # evidence, records job runs and suite scores, and writes the alerts and retirements its checks decide;
    # refreshes the catalog (CAT-1: feeds cached in `bench_catalog`, facts and `went paid` as config events).
    # O-1..O-4: keeps the onboarding queue in `bench_onboard`, registers what it onboards, records progress.
    "prober": service_base("prober") + reads_stream(EVENTS) + uses_bucket(subjects.JOBS_BUCKET)
    + uses_bucket(subjects.IDS_BUCKET) + uses_bucket(subjects.CATALOG_BUCKET)
    + uses_bucket(subjects.ONBOARD_BUCKET) + Grant(
        publish=(
            subjects.CONFIG, f"{subjects.JOB_PREFIX}.>", subjects.CALLS_ALL, subjects.RPC_CALLER_MODELS,
            LEDGER_RPC, f"{subjects.SUITE_PREFIX}.>", f"{subjects.ONBOARD_PREFIX}.>",
        ),
        subscribe=(f"{subjects.SEAT_PREFIX}.>", subjects.RPC_PROBER_SUITE, subjects.RPC_PROBER_RESCORE,
                   subjects.RPC_PROBER_CATALOG, subjects.RPC_PROBER_ONBOARD),
    ),
    # Folds every event into DuckDB, answers the ledger's questions, records verdicts; owns the streams.
    "ledger": service_base("ledger") + reads_stream(EVENTS) + Grant(
        publish=(f"{subjects.VERDICT_PREFIX}.>",),
        subscribe=(LEDGER_RPC,),
    ),
    SUPERVISOR: Grant(publish=(subjects.health_subject("*"),), subscribe=(f"{inbox_prefix(SUPERVISOR)}.>",)),
    ADMIN: Grant(publish=(">",), subscribe=(">",)),
}


def permissions(role: str) -> dict[str, object]:
    """The role's `permissions` block for nats-server's config."""
    grant = GRANTS[role]
    block: dict[str, object] = {"publish": {"allow": sorted(set(grant.publish))},
                                "subscribe": {"allow": sorted(set(grant.subscribe))}}
    if role in SERVICES:
        # Answer requests on their reply subjects (RPC, health pings), whoever's inbox they name.
        block["allow_responses"] = True
    return block


def authorization(public_keys: Mapping[str, tuple[str, ...]]) -> dict[str, object]:
    """nats-server's `authorization` block: one nkey user per role's key (two while a rotation overlaps),
    each with that role's permissions."""
    users = [{"nkey": key, "permissions": permissions(role)}
             for role in ROLES for key in public_keys.get(role, ())]
    return {"users": users}


def matrix_markdown() -> str:
    """The matrix as a Markdown table (docs/architecture.md carries it; `bench bus permissions` prints it)."""
    lines = ["| role | may publish | may subscribe |", "|---|---|---|"]
    for role in ROLES:
        grant = GRANTS[role]
        pub = "<br>".join(f"`{s}`" for s in sorted(set(grant.publish)))
        sub = "<br>".join(f"`{s}`" for s in sorted(set(grant.subscribe)))
        if role in SERVICES:
            sub += "<br>(answers on requests' reply subjects)"
        lines.append(f"| {role} | {pub} | {sub} |")
    return "\n".join(lines)

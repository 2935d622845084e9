"""The pacing history (L-2) on a real DuckDB file: a connection's last 24 hours in the shape of the
callers' windows (exact rows for calls that ended lately, minute buckets before), and its month."""

from __future__ import annotations

from datetime import timedelta

from services.ledger.store import Store
from shared import bus, subjects
from shared.commands import PACING_BUCKET_S, PacingReply
from shared.ids import utcnow
from tests.integration.ledger.process import LedgerProcess, apply_each, ask, publish_all
from tests.unit.ledger.factories import T0, call_used, completed

P = "p20261202-093000-abcd"
CONV = "r20261202-093000-beef"
NOW = T0 + timedelta(hours=1)




def test_recent_calls_come_back_exact_older_ones_in_minute_buckets(store: Store) -> None:
    lately, earlier = NOW - timedelta(seconds=30), NOW - timedelta(minutes=10)
    apply_each(
        store,
        completed(f"{P}.member1", alias="a", connection="groq", at=lately, attempts=2),  # retries count
        call_used(f"{CONV}.t1.1", alias="b", connection="groq", at=earlier),
        call_used(f"{CONV}.t1.2", alias="b", connection="groq", at=earlier + timedelta(seconds=1)),
        call_used(f"{CONV}.t1.3", alias="b", connection="groq", paced="refused", attempts=0, at=earlier),
        completed(f"{P}.member2", alias="a", connection="local", at=lately),  # another connection
        # Started long ago but ended lately: a caller may still hold its attempts one by one.
        completed(f"{P}.member3", alias="a", connection="groq", at=NOW - timedelta(seconds=60), seconds=400),
        completed(f"{P}.member4", alias="a", connection="groq", at=NOW - timedelta(hours=25)),  # beyond a day
    )
    reply = store.pacing_history("groq", NOW)
    started = (earlier - timedelta(seconds=3)).timestamp()
    bucket = -(-started // PACING_BUCKET_S) * PACING_BUCKET_S
    assert reply.rows == [
        (bucket, "b", 2, 240, ""),
        ((NOW - timedelta(seconds=460)).timestamp(), "a", 1, 46, f"{P}.member3"),
        ((lately - timedelta(seconds=1.26)).timestamp(), "a", 2, 46, f"{P}.member1"),
    ]
    assert (reply.at, reply.month, reply.month_requests) == (NOW.timestamp(), "2026-12", 2 + 2 + 1 + 1)


def test_the_month_is_the_utc_calendar_month_of_each_start(store: Store) -> None:
    first = T0.replace(day=1, hour=0, minute=0)
    apply_each(
        store,
        completed(f"{P}.member1", connection="groq", at=first + timedelta(seconds=5), seconds=10),  # November
        completed(f"{P}.member2", connection="groq", at=first + timedelta(minutes=5)),
    )
    reply = store.pacing_history("groq", first + timedelta(minutes=30))
    assert reply.month_requests == 1 and [r[4] for r in reply.rows] == ["", ""]
    assert store.pacing_history("nobody", NOW).rows == []


async def test_the_rpc_answers_with_a_call_published_just_before_asking(
    nc: bus.NATS, ledger: LedgerProcess
) -> None:
    now = utcnow()
    await publish_all(nc, [call_used(f"{CONV}.t1.{n}", connection="groq", at=now) for n in range(1, 4)])
    reply = PacingReply.model_validate(await ask(nc, subjects.RPC_LEDGER_PACING, {"connection": "groq"}))
    assert sorted(r[4] for r in reply.rows) == [f"{CONV}.t1.{n}" for n in range(1, 4)]
    assert reply.month_requests == 3
    refused = await ask(nc, subjects.RPC_LEDGER_PACING, {"connection": 7})
    assert refused["error"]["status"] == 400

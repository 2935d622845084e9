"""The ledger process's views over a real NATS: the quota page (L-7), the usage ledger (L-5), read-only
SQL, route conversations as offloads (RM-9, C-13), and no credential anywhere in its file."""

from __future__ import annotations

from datetime import timedelta

import duckdb

from services.ledger import schema
from shared import bus, subjects
from shared.events import AlertRaised, EndpointSaved, GatewayKeyCreated, JobRan
from shared.ids import utcnow
from shared.scheduled_jobs import JobName
from tests.integration.ledger.process import LedgerProcess, ask, publish_all, stream_messages
from tests.unit.ledger.factories import (
    call_used,
    completed,
    cooldown,
    limit_learned,
    limits_saved,
    quota,
    quota_observed,
    recorded,
    route_offload,
    route_turn,
    seated,
    suite_answered,
)

P = "p20261202-093000-abcd"
CONV = "r20261202-093000-beef"
PLANTED = "sk-bench-planted-3c9e7a1f0b"
PLANTED_HASH = "5eed" * 16  # a gateway key's SHA-256, as its creation event carries it


async def test_the_quota_view_counts_what_was_sent_and_who_rests(nc: bus.NATS, ledger: LedgerProcess) -> None:
    now = utcnow()
    resets = now + timedelta(hours=2)
    await publish_all(nc, [
        limits_saved("connection", "groq", rpm=30, rpmo=10_000),
        limits_saved("model", "a", rpd=100),
        quota_observed(f"{P}.member1", [quota("requests", "day", 1000, 10, resets)], connection="groq",
                       at=now - timedelta(minutes=3)),
        completed(f"{P}.member1", alias="a", connection="groq", at=now - timedelta(minutes=2), attempts=2),
        call_used(f"{CONV}.t1.1", alias="a", connection="groq", at=now - timedelta(minutes=1)),
        call_used(f"{CONV}.t1.2", alias="a", connection="groq", status="error", paced="refused", attempts=0,
                  at=now - timedelta(minutes=1)),
        completed(f"{P}.member2", alias="b", connection="local", at=now - timedelta(days=2)),
        cooldown("a", 1, at=now, rest=timedelta(minutes=10), why="rate limited; resting 600s (stated wait)"),
        limit_learned("a", "rpm", 20, call=f"{P}.member1", connection="groq"),
        limit_learned("a", "rpd", 50, call=f"{P}.member1", connection="groq"),
    ])
    reply = await ask(nc, subjects.RPC_LEDGER_QUOTA)
    (line,) = reply["quotas"]
    assert [line[k] for k in ("connection", "alias", "metric", "window")] == ["groq", "a", "requests", "day"]
    assert (line["left"], line["of"], line["source"]) == (10 - 3, 1000, "x-ratelimit-remaining-requests")
    assert 170 <= line["age_s"] <= 240
    sent = {s["connection"]: s for s in reply["sent"]}
    assert sent["groq"]["day"] == {"requests": 3, "tokens": 46 + 120}
    assert sent["groq"]["month"] == sent["groq"]["day"] or now.day == 1  # (a new month may have just begun)
    assert sent.get("local", {"day": {"requests": 0}})["day"]["requests"] == 0  # two days ago
    (rest,) = reply["resting"]
    assert (rest["alias"], rest["minutes_left"], rest["wait"]) == ("a", 10, "stated")
    assert [(u["scope"], u["name"], u["rpm"], u["rpd"]) for u in reply["limits"]["user"]] == [
        ("connection", "groq", 30, None), ("model", "a", None, 100)]
    learned = {x["axis"]: x for x in reply["limits"]["learned"]}
    assert learned["rpm"]["enforced"] is True and learned["rpd"]["enforced"] is False  # the user's rpd wins
    assert learned["rpm"]["where"] == f"call {P}.member1" and "why" not in learned["rpm"]
    assert (await ask(nc, subjects.RPC_LEDGER_QUOTA, {"extra": 1}))["error"]["status"] == 400


async def test_usage_lines_come_newest_first_and_narrowed(nc: bus.NATS, ledger: LedgerProcess) -> None:
    await publish_all(nc, [
        completed(f"{P}.member1", alias="a", connection="groq"),
        completed(f"{P}.member2", alias="b", connection="groq", paced="waited", waited_s=1.0),
        call_used(f"{CONV}.t1.1", alias="a", connection="local"),
        route_offload(CONV, 1, "a"),  # an offload, not a call
        route_turn(CONV, 1, alias="a"),
    ])
    rows = (await ask(nc, subjects.RPC_LEDGER_USAGE))["rows"]
    assert [r["call"] for r in rows] == [f"{CONV}.t1.1", f"{P}.member2", f"{P}.member1"]
    assert rows[1]["paced"] == "waited" and rows[1]["waited_s"] == 1.0 and rows[0]["panel"] == CONV
    narrowed = await ask(nc, subjects.RPC_LEDGER_USAGE, {"connection": "groq", "alias": "b", "limit": 5})
    assert [r["call"] for r in narrowed["rows"]] == [f"{P}.member2"]
    assert (await ask(nc, subjects.RPC_LEDGER_USAGE, {"limit": 0}))["error"]["status"] == 400


async def test_read_only_sql_over_the_tables(nc: bus.NATS, ledger: LedgerProcess) -> None:
    await publish_all(nc, [completed(f"{P}.member1"), route_turn(CONV, 1, alias="a")])
    reply = await ask(nc, subjects.RPC_LEDGER_SQL, {"sql": "SELECT conversation, turn FROM route_turns"})
    assert reply == {"ok": True, "columns": ["conversation", "turn"], "types": ["VARCHAR", "INTEGER"],
                     "rows": [[CONV, 1]], "truncated": False, "error": None}
    refused = await ask(nc, subjects.RPC_LEDGER_SQL, {"sql": "DELETE FROM seats"})
    assert refused["error"]["status"] == 400
    status = await ask(nc, subjects.RPC_LEDGER_STATUS)
    assert status["rows"]["seats"] == 1


async def test_a_route_conversation_is_an_offload_and_a_shadow_seat_is_not(
    nc: bus.NATS, ledger: LedgerProcess
) -> None:
    """RM-9 / C-13 / H-G10..H-G11 on `<conv>.<n>`."""
    shadow = f"{P}.shadow1"
    await publish_all(nc, [
        seated(P), completed(f"{P}.member1"), completed(shadow, alias="c", purpose="shadow", seat="shadow"),
        route_offload(CONV, 1, "a", seconds=2.34), route_offload(CONV, 2, "b", status="empty"),
    ])
    calls = [f"{CONV}.1", shadow, f"{CONV}.2", f"{P}.member1"]
    assert await ask(nc, subjects.RPC_LEDGER_PENDING, {"calls": calls}) == {
        "pending": [f"{CONV}.1", f"{CONV}.2", f"{P}.member1"]}
    verdict = await ask(nc, subjects.RPC_LEDGER_VERDICT, {"call": f"{CONV}.1", "useful": True})
    assert "error" not in verdict
    assert verdict["recorded"]["note"] == "route conversation; first turn ok in 2.3s"
    assert verdict["recorded"]["task"] == "Fix the failing test (bench/agents:route)"
    assert (await ask(nc, subjects.RPC_LEDGER_PENDING, {"calls": calls}))["pending"] == [f"{CONV}.2",
                                                                                         f"{P}.member1"]
    stored = await stream_messages(nc)
    on_shadow = await ask(nc, subjects.RPC_LEDGER_VERDICT, {"call": shadow, "useful": True})
    assert on_shadow["error"]["status"] == 404
    assert await stream_messages(nc) == stored


async def test_no_credential_reaches_any_table(nc: bus.NATS, ledger: LedgerProcess) -> None:
    """A key as an endpoint's headers would carry it, and a gateway key's hash: every text of every table
    is searched for them."""
    endpoint = EndpointSaved(
        id="cfg:planted", by="admin", name="groq", base="https://api.groq.com/openai/v1",
        headers={"Authorization": f"Bearer {PLANTED}", "x-api-key": PLANTED, "X-Goog-Api-Key": PLANTED,
                 "anthropic-version": "2023-06-01"},
    )
    await publish_all(nc, [
        endpoint, GatewayKeyCreated(id="cfg:key", by="admin", name="ci", hash=PLANTED_HASH, hint="bw-…5eed"),
        limits_saved("connection", "groq", rpm=30), seated(P), completed(f"{P}.member1"),
        recorded(f"{P}.member1", "a", True), call_used(f"{CONV}.t1.1"), route_offload(CONV, 1, "a"),
        route_turn(CONV, 1), limit_learned(), quota_observed("c1", [quota()]), cooldown(),
        suite_answered("a", "t1"),
        AlertRaised(id="cfg:paid", by="admin", key="model:paid:groq/m", kind="went paid",
                    message="listed with a price now", alias="a"),
        completed("pr20260105-040000-availability.t1", seat="probe tiny", purpose="probe"),
        JobRan(id="job:availability:x", job=JobName.AVAILABILITY, due=utcnow(), mode="run", instance="p1",
               started=utcnow(), outcome="done"),
    ])
    assert (await ask(nc, subjects.RPC_LEDGER_STATUS))["rows"]["config_changes"] == 4
    ledger.stop()
    con = duckdb.connect(str(ledger.db), read_only=True)
    try:
        tables = {name: con.execute(f"SELECT * FROM {name}").fetchall() for name in schema.ALL_TABLE_NAMES}
    finally:
        con.close()
    assert all(rows for name, rows in tables.items()), [name for name, rows in tables.items() if not rows]
    held = [name for name, rows in tables.items() if PLANTED in repr(rows) or PLANTED_HASH in repr(rows)]
    assert held == []
    assert "2023-06-01" in repr(tables["config_changes"])  # the harmless header is kept: the search is real
    assert PLANTED not in ledger.log()

"""The store's views on a real DuckDB file: quota facts and usage lines (L-5, L-7), what is an offload,
the read-only SQL guard, and a file of another shape folded again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from services.ledger import analytics, schema
from services.ledger.store import Store
from shared.commands import SentCount, SentLine, UsageRequest
from tests.integration.ledger.process import apply_each
from tests.unit.ledger.factories import (
    T0,
    call_used,
    completed,
    cooldown,
    limit_learned,
    limits_saved,
    quota,
    quota_observed,
    recorded,
    route_offload,
)

P = "p20261202-093000-abcd"
CONV = "r20261202-093000-beef"
NOW = T0 + timedelta(hours=1)




def test_the_latest_quota_record_wins_across_batches(store: Store) -> None:
    apply_each(store, quota_observed("c1", [quota(remaining=10)]), quota_observed("c2", [quota(remaining=3)]))
    cur = store.con.cursor()
    assert cur.execute("SELECT seq, remaining, call FROM quota_records").fetchall() == [(2, 3, "c2")]


def test_quota_facts_count_what_was_sent_since_each_record(store: Store) -> None:
    apply_each(
        store,
        completed(f"{P}.member1", alias="a", connection="groq", at=NOW - timedelta(minutes=10)),  # before: no
        quota_observed("c1", [quota("requests", "day", 1000, 10, NOW + timedelta(hours=2)),
                              quota("tokens", "minute", 6000, 5000)], connection="groq"),
        completed(f"{P}.member2", alias="a", connection="groq", at=NOW - timedelta(minutes=5), attempts=3),
        completed(f"{P}.member3", alias="b", connection="groq", at=NOW - timedelta(minutes=5)),  # other model
        call_used(f"{CONV}.t1.1", alias="a", connection="groq", at=NOW - timedelta(minutes=4)),
        call_used(f"{CONV}.t1.2", alias="a", connection="groq", paced="refused", attempts=0, status="error",
                  at=NOW - timedelta(minutes=4)),
    )
    facts = store.quota_facts(NOW)
    counted = {(q.metric, q.period): (q.requests_since, q.tokens_in_since, q.tokens_out_since)
               for q in facts.quotas}
    assert counted == {("requests", "day"): (4, 12 + 100, 34 + 20), ("tokens", "minute"): (4, 112, 54)}


def test_sent_counts_attempts_and_tokens_over_the_last_day_and_this_month(store: Store) -> None:
    apply_each(
        store,
        completed(f"{P}.member1", connection="groq", at=NOW - timedelta(hours=2), attempts=2),
        completed(f"{P}.member2", connection="groq", at=NOW - timedelta(hours=30)),  # this month, not today
        completed(f"{P}.member3", connection="groq", at=datetime(2026, 11, 30, 23, tzinfo=UTC)),  # older
        call_used(f"{CONV}.t1.1", connection="groq", at=NOW - timedelta(minutes=1), attempts=3),
        call_used(f"{CONV}.t1.2", connection="groq", paced="refused", attempts=0, status="error", at=NOW),
        route_offload(CONV, 1, "a", at=NOW),  # not a call: the attempts above are
        completed("p2.member1", connection="local", at=NOW - timedelta(minutes=1)),
    )
    sent = {s.connection: s for s in store.quota_facts(NOW).sent}
    assert sent == {
        "groq": SentLine(connection="groq", day=SentCount(requests=5, tokens=46 + 120),
                         month=SentCount(requests=6, tokens=46 * 2 + 120)),
        "local": SentLine(connection="local", day=SentCount(requests=1, tokens=46),
                          month=SentCount(requests=1, tokens=46)),
    }


def test_quota_facts_hold_active_rests_limit_changes_and_learned_limits(store: Store) -> None:
    apply_each(
        store,
        cooldown("a", 1, at=NOW - timedelta(minutes=1), rest=timedelta(minutes=5), why="x (stated wait)"),
        cooldown("b", 2, at=NOW - timedelta(hours=1), rest=timedelta(minutes=30)),  # over
        limits_saved("connection", "groq", rpm=30),
        limits_saved("model", "a", rpd=100),
        limit_learned("a", "rpm", 20, call=f"{P}.member1"),
    )
    facts = store.quota_facts(NOW)
    assert [(c.alias, c.until) for c in facts.cooldowns] == [("a", NOW + timedelta(minutes=4))]
    assert [(c.change["scope"], c.change["name"], c.change["rpm"]) for c in facts.limits] == [
        ("connection", "groq", 30), ("model", "a", None)]
    assert [(x.alias, x.axis, x.allowed, x.call) for x in facts.learned] == [("a", "rpm", 20, f"{P}.member1")]


def test_usage_lines_newest_first_narrowed_by_the_request(store: Store) -> None:
    apply_each(
        store,
        completed(f"{P}.member1", alias="a", connection="groq", at=NOW - timedelta(hours=3)),
        completed(f"{P}.member2", alias="b", connection="groq", at=NOW - timedelta(hours=1)),
        call_used(f"{CONV}.t1.1", alias="a", connection="local", at=NOW),
        route_offload(CONV, 1, "a", at=NOW),
    )
    assert [u.call for u in store.usage(UsageRequest())] == [f"{CONV}.t1.1", f"{P}.member2", f"{P}.member1"]
    assert [u.call for u in store.usage(UsageRequest(connection="groq", alias="a"))] == [f"{P}.member1"]
    assert [u.call for u in store.usage(UsageRequest(purpose="route"))] == [f"{CONV}.t1.1"]
    naive_since = (NOW - timedelta(hours=2)).replace(tzinfo=None)  # read as UTC
    assert [u.call for u in store.usage(UsageRequest(since=naive_since))] == [f"{CONV}.t1.1", f"{P}.member2"]
    (latest,) = store.usage(UsageRequest(limit=1))
    assert (latest.panel, latest.purpose, latest.tokens_in, latest.first_token_s) == (CONV, "route", 100, 0.8)


def test_only_panel_seats_mergers_and_route_conversations_are_offloads(store: Store) -> None:
    shadow, probe, offload = f"{P}.shadow1", "probe.a", f"{CONV}.1"
    apply_each(
        store,
        completed(shadow, purpose="shadow", seat="shadow"), completed(probe, purpose="probe", seat="probe"),
        route_offload(CONV, 1, "a"), completed(f"{P}.member1"),
        recorded(shadow, "a", True, n=1), recorded(offload, "a", True, n=2),
        recorded(f"{P}.member1", "a", True, n=3),
    )
    assert store.verdict_facts(shadow)[0] is None and store.verdict_facts(probe)[0] is None
    seat, verdict = store.verdict_facts(offload)
    assert seat is not None and verdict is not None
    assert (seat.purpose, seat.seat) == ("route", "route")
    assert seat.task == "Fix the failing test (bench/agents:route)"
    assert set(store.pending_facts([shadow, probe, offload])) == {offload}
    judged = store.judged("bench/core")  # the member seat only: the judged shadow seat is no offload
    assert [(j.alias, j.task) for j in judged] == [("a", "find the race in refresh() (bench/core, code)")]


def sql(store: Store, query: str, max_rows: int = 100) -> dict[str, object]:
    return store.sql(query, max_rows).model_dump()


def test_sql_answers_one_select_with_a_row_cap(store: Store) -> None:
    apply_each(store, *(completed(f"{P}.member{i}", alias="ab"[i % 2]) for i in range(5)))
    reply = sql(store, "WITH s AS (SELECT alias, count(*) AS n FROM seats GROUP BY alias) "
                       "SELECT alias, n, (SELECT max(\"at\") FROM seats) AS last FROM s ORDER BY alias")
    assert reply["ok"] is True and reply["columns"] == ["alias", "n", "last"]
    assert reply["types"] == ["VARCHAR", "BIGINT", "TIMESTAMP WITH TIME ZONE"]
    assert reply["rows"] == [["a", 3, T0.isoformat()], ["b", 2, T0.isoformat()]] and not reply["truncated"]
    capped = sql(store, "FROM seats SELECT call ORDER BY call", max_rows=2)
    assert capped["rows"] == [[f"{P}.member0"], [f"{P}.member1"]] and capped["truncated"] is True


def test_sql_stops_before_the_reply_would_outgrow_a_nats_message(store: Store) -> None:
    apply_each(store, *(completed(f"{P}.member{i}", answer="x" * 100_000) for i in range(8)))
    reply = store.sql("SELECT answer FROM seats", 100)
    assert reply.ok and reply.truncated and len(reply.rows) == analytics.MAX_REPLY_BYTES // 100_000
    assert len(reply.model_dump_json()) < analytics.MAX_REPLY_BYTES + 10_000


@pytest.mark.parametrize(("query", "why"), [
    ("DELETE FROM seats", "only SELECT"),
    ("SELECT 1; DELETE FROM seats", "one statement at a time"),
    ("ATTACH 'other.duckdb'", "only SELECT"),
    ("COPY seats TO 'out.csv'", "only SELECT"),
    ("WITH gone AS (DELETE FROM seats RETURNING call) SELECT * FROM gone", "read-only"),
    ("SELECT * FROM read_text('/etc/hostname')", "disabled by configuration"),
    ("SELECT * FROM read_csv('/etc/passwd')", "disabled by configuration"),
    ("SELECT * FROM read_parquet('/tmp/x.parquet')", "disabled by configuration"),
    ("SELECT * FROM read_json('/tmp/x.json')", "disabled by configuration"),
    ("SELECT * FROM glob('/etc/*')", "disabled by configuration"),
    ("SELECT getenv('HOME')", "does not exist"),
    ("INSTALL httpfs", "only SELECT"),
    ("LOAD httpfs", "only SELECT"),
    ("SET threads = 8", "only SELECT"),
    ("PRAGMA enable_profiling", "only SELECT"),
    ("CALL pragma_version()", "only SELECT"),
    ("CREATE TABLE x AS SELECT 1", "only SELECT"),
    ("SELEC 1", "not valid SQL"),
])
def test_sql_refuses_whatever_could_write_or_reach_outside(store: Store, query: str, why: str) -> None:
    apply_each(store, completed(f"{P}.member1"))
    reply = sql(store, query)
    assert reply["ok"] is False and reply["error"]["status"] == 400, reply  # type: ignore[index]
    assert why in reply["error"]["message"]  # type: ignore[index]
    assert store.counts()["seats"] == 1 and store.position() == 1
    apply_each(store, completed(f"{P}.member2"))  # the fold goes on
    assert store.counts()["seats"] == 2


def test_no_statement_can_undo_the_locks(store: Store) -> None:
    """Even a statement that got past the SELECT check (here run directly) finds the configuration locked."""
    cur = store.con.cursor()
    try:
        for undo in ("SET enable_external_access = true", "RESET allowed_directories", "SET threads = 4"):
            with pytest.raises(duckdb.InvalidInputException, match="locked"):
                cur.execute(undo)
        with pytest.raises(duckdb.PermissionException):
            cur.execute("COPY seats TO '/tmp/anywhere.csv'")
    finally:
        cur.close()


def test_sql_stops_a_query_that_runs_too_long(store: Store) -> None:
    cur = store.con.cursor()
    try:
        reply = analytics.run(cur, "SELECT count(*) FROM range(1000000000000) a", 10, timeout_s=0.2)
    finally:
        cur.close()
    assert reply.ok is False and reply.error is not None and reply.error.status == 408


def test_a_file_of_another_shape_is_folded_again(tmp_path: Path) -> None:
    path = tmp_path / "l.duckdb"
    con = duckdb.connect(str(path))  # as an earlier ledger left it: no fingerprint, fewer seat columns
    con.execute(schema.POSITION_DDL)
    con.execute("INSERT INTO ledger_position VALUES ('BENCH_EVENTS', 40)")
    con.execute("CREATE TABLE seats (call VARCHAR PRIMARY KEY, seq BIGINT)")
    con.close()
    store = Store(path)
    try:
        assert store.position() == 0  # the follower starts again from sequence 1
        apply_each(store, completed(f"{P}.member1", paced="waited", waited_s=1.5))
        cur = store.con.cursor()
        assert cur.execute("SELECT paced, waited_s FROM seats").fetchall() == [("waited", 1.5)]
    finally:
        store.close()
    again = Store(path)  # the same shape: kept
    try:
        assert again.position() == 1
    finally:
        again.close()

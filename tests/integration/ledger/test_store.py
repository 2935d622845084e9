"""The DuckDB store on a real file: rows and position in one transaction, first-wins and fill merges
across batches."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.ledger import batches, numbered
from services.ledger import folding, schema
from services.ledger.fold import fold_batch
from services.ledger.store import AppliedTwice, Store, discard, wal_of
from tests.unit.ledger.factories import answered, completed, recorded, seated

P = "p20261202-093000-abcd"


def test_rows_and_position_are_applied_together(tmp_path: Path) -> None:
    store = Store(tmp_path / "l.duckdb")
    assert store.position() == 0
    store.apply(fold_batch([(1, seated(P)), (2, completed(f"{P}.member1", answer="first"))]), 2)
    store.apply(fold_batch([(3, completed(f"{P}.member1", answer="late", event_id="seat:again")),
                            (4, answered(P, [f"{P}.member1"]))]), 4)
    assert store.position() == 4
    assert store.counts() == {"events_applied": 4, "panels": 1, "seats": 1, "verdicts": 0,
                              "config_changes": 0, "cooldowns": 0, "usage": 1, "route_turns": 0,
                              "limits_learned": 0, "quota_records": 0, "alerts": 0, "probes": 0,
                              "job_runs": 0, "suite_answers": 0, "ledger_position": 1, "ledger_schema": 1}
    con = store.con.cursor()
    assert con.execute("SELECT answer FROM seats").fetchall() == [("first",)]
    assert con.execute("SELECT collection, prompt, len(seats), calls FROM panels").fetchall() == [
        ("core", "find the race in refresh()", 2, [f"{P}.member1"])]
    # The plan arrives as JSON text and is stored as STRUCTs with the events' own fields.
    ((seats, skipped),) = con.execute("SELECT seats, skipped FROM panels").fetchall()
    assert seats == [s.model_dump() for s in seated(P).seats]
    assert skipped == [{"seat": "explorer", "alias": "z", "why": "resting"}]
    store.close()


def test_a_failed_batch_leaves_neither_rows_nor_position(tmp_path: Path) -> None:
    store = Store(tmp_path / "l.duckdb")
    store.apply(fold_batch([(1, completed(f"{P}.member1"))]), 1)
    # Sequence 1 again (a fold applying a sequence twice would be a bug): the whole batch is refused.
    with pytest.raises(AppliedTwice):
        store.apply(fold_batch([(1, completed(f"{P}.member2")), (2, completed(f"{P}.member3"))]), 2)
    assert store.position() == 1
    assert store.counts()["seats"] == 1
    store.apply(fold_batch([(2, completed(f"{P}.member2"))]), 2)
    assert store.position() == 2
    store.close()


def test_facts_for_the_offload_rules(tmp_path: Path) -> None:
    store = Store(tmp_path / "l.duckdb")
    store.apply(fold_batch([
        (1, seated(P)),
        (2, completed(f"{P}.member1", alias="a")),
        (3, completed(f"{P}.member2", alias="b", status="error", error="boom")),
        (4, completed("p2.member1", alias="a", collection="other")),
        (5, recorded(f"{P}.member1", "a", True, "ok then", n=1)),
        (6, recorded(f"{P}.member1", "a", False, "wrong", n=2)),
        (7, recorded("p2.member1", "a", True, "", n=3)),
    ]), 7)
    seat, verdict = store.verdict_facts(f"{P}.member1")
    assert seat is not None and (seat.alias, seat.status, seat.seat) == ("a", "ok", "member")
    assert seat.shape == "code"  # its panel's, for the seater's tallies per shape
    other = store.verdict_facts("p2.member1")[0]
    assert other is not None and other.shape == ""  # its panel's plan is not in the ledger
    assert verdict is not None and (verdict.seq, verdict.useful, verdict.note) == (6, False, "wrong")
    assert verdict.false == ("sql injection",)
    assert store.verdict_facts("nope") == (None, None)
    assert store.pending_facts([f"{P}.member1", f"{P}.member2", "nope"]) == {
        f"{P}.member1": ("ok", True), f"{P}.member2": ("error", False)}
    judged = store.judged("bench/core")
    assert [(j.alias, j.useful, j.note) for j in judged] == [("a", False, "wrong")]
    store.close()


def test_discard_removes_the_file_and_its_wal(tmp_path: Path) -> None:
    path = tmp_path / "l.duckdb"
    store = Store(path)
    store.apply(fold_batch([(1, completed(f"{P}.member1"))]), 1)
    store.close()
    wal_of(path).write_bytes(b"")
    discard(path)
    assert not path.exists() and not wal_of(path).exists()
    assert Store(path).position() == 0


def test_duckdb_memory_is_capped_and_a_bigger_query_still_answers(tmp_path: Path) -> None:
    store = Store(tmp_path / "l.duckdb", memory_limit="32MB")
    con = store.con.cursor()
    assert con.execute("SELECT current_setting('memory_limit')").fetchone() == ("30.5 MiB",)
    # A sort over more than the cap: spilled to the file's temp folder, not refused.
    found = con.execute("SELECT count(*) FROM (SELECT md5(range::VARCHAR) AS s FROM range(1500000) "
                        "ORDER BY s)").fetchone()
    assert found == (1_500_000,)
    store.close()


def test_the_checkpoint_threshold_and_memory_cap_reach_duckdb(tmp_path: Path) -> None:
    """BENCH_DUCKDB_CHECKPOINT_THRESHOLD and BENCH_DUCKDB_MEMORY_LIMIT are DuckDB's own settings."""
    small = Store(tmp_path / "a.duckdb", memory_limit="300MB", checkpoint="8MB")
    large = Store(tmp_path / "b.duckdb", memory_limit="600MB", checkpoint="512MB")
    try:
        def setting(store: Store, name: str) -> str:
            row = store.con.execute(f"SELECT current_setting('{name}')").fetchone()
            assert row is not None
            return str(row[0])

        assert [setting(small, "checkpoint_threshold"), setting(large, "checkpoint_threshold")] == [
            "7.6 MiB", "488.2 MiB"]  # DuckDB's MB are 10^6 bytes, shown in MiB
        assert [setting(small, "memory_limit"), setting(large, "memory_limit")] == ["286.1 MiB", "572.2 MiB"]
    finally:
        small.close()
        large.close()


def test_a_ledger_larger_than_its_memory_cap_folds_within_it(tmp_path: Path) -> None:
    """DuckDB evicts table blocks past its cap, so the ledger's memory settles at
    `BENCH_DUCKDB_MEMORY_LIMIT` however many rows it holds (issue 16's soak). The same file read whole
    without a cap takes more than the cap, so the fold had more to keep than it was allowed to.
    Folded uncapped, these batches left DuckDB holding 33 MB."""
    cap = 24_000_000
    path = tmp_path / "l.duckdb"
    store = Store(path, memory_limit="24MB", checkpoint="2MB")
    held = []
    seats = 150_000
    for batch in numbered(batches(seats, 2500), 0):
        store.apply(folding.prepare(batch), batch[-1][0])
        held.append(sum(store.memory().values()))
    counts = store.counts()
    store.close()
    assert counts["seats"] == seats and counts["usage"] == seats
    assert max(held) <= cap
    whole = Store(path, memory_limit="4GB")
    try:
        for name in schema.ALL_TABLE_NAMES:
            whole.con.execute(f"SELECT * FROM {name}").fetchall()
        assert sum(whole.memory().values()) > 1.2 * cap
    finally:
        whole.close()

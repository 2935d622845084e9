"""`bench ledger export` on a real DuckDB file: each table's Parquet read back equals the table, a second
export adds exactly the new rows (and a panel again once it is answered), `since` keeps later days only,
and the export's files are read back by chunks (a name outside the export is refused)."""

from __future__ import annotations

import base64
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from services.ledger import export, export_files
from services.ledger.store import Store, exports_of
from shared.commands import ExportChunkRequest, ExportReply, ExportRequest
from shared.ids import candidate_id
from tests.integration.ledger.process import apply_each
from tests.unit.ledger.factories import (
    T0,
    answered,
    call_used,
    completed,
    limits_saved,
    quota,
    quota_observed,
    recorded,
    seated,
)

P, Q = "p20261202-093000-abcd", "p20261203-093000-abcd"
DAY2 = T0 + timedelta(days=1)


def run_export(store: Store, **ask: Any) -> ExportReply:
    return store.export(ExportRequest(**ask), exports_of(store.path), candidate_id("x"), T0)


def read_back(folder: Path, table: str) -> list[tuple[Any, ...]]:
    """What a reader gets from every export in `folder` (no file: no rows)."""
    if not list(folder.glob(f"*/{table}/*/*.parquet")):
        return []
    con = duckdb.connect()
    try:
        return con.execute(
            f"SELECT * EXCLUDE (day) FROM read_parquet('{folder}/*/{table}/**/*.parquet', "
            "hive_partitioning=true) ORDER BY seq"
        ).fetchall()
    finally:
        con.close()


def table_rows(store: Store, table: str) -> list[tuple[Any, ...]]:
    return store.con.cursor().execute(f"SELECT * FROM {table} ORDER BY seq").fetchall()


def test_parquet_read_back_equals_each_table_and_the_next_export_adds_the_new_rows(store: Store) -> None:
    apply_each(
        store, seated(P), completed(f"{P}.member1"), completed(f"{P}.member2", alias="b", status="error"),
        recorded(f"{P}.member1", "a", useful=True), call_used("r20261202-093000-beef.t1.1"),
        quota_observed("c1", [quota(remaining=10)]), limits_saved("connection", "local", rpm=30),
    )
    root = exports_of(store.path)
    first = run_export(store)
    assert first.rows == {"events_applied": 7, "panels": 1, "seats": 2, "verdicts": 1, "config_changes": 1,
                          "usage": 3, "quota_records": 1}
    assert all(f.path.endswith(".parquet") and "/day=2026-12-02/" in f.path for f in first.files)
    for table in export.TABLES:
        assert read_back(root, table.name) == table_rows(store, table.name), table.name

    apply_each(store, answered(P, [f"{P}.member1"]), completed(f"{Q}.member1", at=DAY2),
               quota_observed("c2", [quota(remaining=3)]))
    second = run_export(store, after=first.marks)
    assert second.rows == {"events_applied": 3, "panels": 1, "seats": 1, "usage": 1, "quota_records": 1}
    assert second.marks["seats"] == 9 and second.marks["verdicts"] == first.marks["verdicts"]
    assert len(read_back(root, "seats")) == 3  # the two exports hold each seat once
    panels = read_back(root, "panels")  # the panel twice: seated, then answered (the higher seq is current)
    assert [p[1] for p in panels] == [1, 8] and panels[-1] == table_rows(store, "panels")[0]
    assert run_export(store, after=second.marks).rows == {}


def test_since_keeps_the_later_days_only(store: Store) -> None:
    apply_each(store, completed(f"{P}.member1"), completed(f"{Q}.member1", at=DAY2))
    later = run_export(store, since=DAY2.date())
    assert later.rows == {"events_applied": 1, "seats": 1, "usage": 1}
    assert {f.path.split("/")[1] for f in later.files} == {"day=2026-12-03"}


def test_chunks_give_back_the_files_bytes_and_nothing_else(store: Store) -> None:
    apply_each(store, completed(f"{P}.member1", answer="x" * 2_000_000))
    reply = run_export(store)
    root = exports_of(store.path)
    seats = next(f for f in reply.files if f.path.startswith("seats/"))
    got, offset, eof = b"", 0, False
    while not eof:
        chunk = export_files.read_chunk(root, ExportChunkRequest(export=reply.export, path=seats.path,
                                                                 offset=offset))
        data = base64.b64decode(chunk.data)
        got, offset, eof = got + data, offset + len(data), chunk.eof
    assert got == (root / reply.export / seats.path).read_bytes() and len(got) == seats.bytes
    for name, path in ((reply.export, "../../l.duckdb"), (reply.export, "seats"), ("../x", seats.path)):
        with pytest.raises(ValueError):
            export_files.read_chunk(root, ExportChunkRequest(export=name, path=path))

"""The export's statements and names (`bench ledger export`): windows by sequence and day, the hive
layout, export ids, which folders are swept."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from services.ledger import export, schema


def test_the_window_is_after_the_mark_up_to_the_snapshot_and_from_the_day() -> None:
    assert export.window(schema.SEATS, 10, 20, None) == "seq > 10 AND seq <= 20"
    assert export.count_sql(schema.QUOTA_RECORDS, 0, 5, date(2026, 12, 1)) == (
        "SELECT count(*) FROM quota_records WHERE seq > 0 AND seq <= 5 "
        """AND CAST("observed_at" AS DATE) >= DATE '2026-12-01'"""
    )


def test_copy_writes_hive_partitions_by_day_with_the_exports_name() -> None:
    sql = export.copy_sql(schema.PANELS, Path("/data/ledger-exports/x20261203-101010-abcd"),
                          "x20261203-101010-abcd", 3, 9, None)
    assert sql.startswith('COPY (SELECT *, CAST(coalesce("at", "answered_at") AS DATE) AS day FROM panels ')
    assert "TO '/data/ledger-exports/x20261203-101010-abcd/panels'" in sql
    assert "PARTITION_BY (day)" in sql and "FILENAME_PATTERN 'part-x20261203-101010-abcd-{i}'" in sql
    with pytest.raises(ValueError):
        export.copy_sql(schema.SEATS, Path("/x"), "x'; DROP", 0, 1, None)


def test_every_table_is_exported_by_sequence_and_day() -> None:
    assert {t.name for t in export.TABLES} == {t.name for t in schema.TABLES}
    assert all("seq" in t.columns for t in export.TABLES)


def test_only_old_export_folders_are_swept() -> None:
    now = 10_000.0
    folders = [("x20261203-101010-abcd", now - export.KEEP_S - 1), ("x20261203-111010-abcd", now - 5),
               ("notes", 0.0)]
    assert export.stale(folders, now) == ["x20261203-101010-abcd"]

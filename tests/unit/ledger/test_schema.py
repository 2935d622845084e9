"""The ledger's tables as declared: columns from the row types, keys and merge rules checked at import, and
the shape that files already on disk were made with."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from services.ledger import schema
from services.ledger.fold import SeatRow


class NoSeq(NamedTuple):
    id: str


def test_a_key_must_be_a_column_and_latest_needs_the_sequence() -> None:
    with pytest.raises(ValueError, match="key"):
        schema.Table("bad", "seats", SeatRow, key=("seat_id",), merge="first")
    with pytest.raises(ValueError, match="stream sequence"):
        schema.Table("bad", "x", NoSeq, key=("id",), merge="latest")
    assert schema.Table("ok", "x", NoSeq, key=("id",), merge="first").columns == {"id": "VARCHAR"}


def test_seat_and_panel_tables_keep_their_ddl() -> None:
    seats = schema.SEATS.create_sql()
    assert seats.startswith('CREATE TABLE IF NOT EXISTS seats ("call" VARCHAR, "seq" BIGINT, "event" VARCHAR')
    assert '"seconds" DOUBLE' in seats
    assert '"http_status" INTEGER, "attempts" INTEGER, "tokens_in" BIGINT' in seats
    assert seats.endswith('"estimated" BOOLEAN, "caller" VARCHAR, "served_by" VARCHAR, "swap" BOOLEAN, '
                          '"paced" VARCHAR, "waited_s" DOUBLE, PRIMARY KEY (call))')
    panels = schema.PANELS.create_sql()
    assert ('"seats" STRUCT(call VARCHAR, seat VARCHAR, alias VARCHAR, served VARCHAR, endpoint VARCHAR, '
            'connection VARCHAR)[], "skipped" STRUCT(seat VARCHAR, alias VARCHAR, why VARCHAR)[]') in panels
    assert '"at" TIMESTAMPTZ' in panels and '"calls" VARCHAR[]' in panels
    assert '"change" JSON' in schema.CONFIG_CHANGES.create_sql()


def test_the_fingerprint_is_the_one_existing_files_were_made_with() -> None:
    # A ledger file whose fingerprint differs is deleted and folded again from the stream at start: a change
    # here must be a deliberate change of the tables' shape.
    assert schema.FINGERPRINT == "b152f87667dd6c7e"


def test_merge_statements_follow_each_rule() -> None:
    assert schema.SEATS.merge_sql().startswith("INSERT OR IGNORE INTO seats")
    fill = schema.PANELS.merge_sql()
    assert "ON CONFLICT (panel) DO UPDATE" in fill and 'coalesce(panels."prompt", excluded."prompt")' in fill
    assert '"panel" = coalesce' not in fill and '"seq" = greatest(panels."seq", excluded."seq")' in fill
    latest = schema.QUOTA_RECORDS.merge_sql()
    assert "ON CONFLICT (connection, alias, metric, period) DO UPDATE" in latest
    assert latest.endswith("WHERE excluded.seq > quota_records.seq")
    assert '"remaining" = excluded."remaining"' in latest

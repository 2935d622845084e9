"""DuckDB column types read from row types' annotations."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, NamedTuple

import pytest
from pydantic import BaseModel

from services.ledger.columns import (
    Duck,
    Integer,
    Json,
    columns_of,
    duck_type,
    staged_columns_of,
    struct_list,
)


class Pair(BaseModel):
    name: str
    weight: float


class Sample(NamedTuple):
    id: str
    seq: int
    at: datetime | None
    ratio: float
    ok: bool
    tags: list[str] | None
    small: Integer | None
    doc: Json
    pairs: Annotated[str, struct_list(Pair)] | None


def test_a_row_types_annotations_give_its_columns_in_order() -> None:
    assert columns_of(Sample) == {
        "id": "VARCHAR", "seq": "BIGINT", "at": "TIMESTAMPTZ", "ratio": "DOUBLE", "ok": "BOOLEAN",
        "tags": "VARCHAR[]", "small": "INTEGER", "doc": "JSON",
        "pairs": "STRUCT(name VARCHAR, weight DOUBLE)[]",
    }


def test_a_struct_list_is_appended_as_json_text_and_stored_as_structs() -> None:
    staged = staged_columns_of(Sample)
    assert staged["pairs"] == "JSON"
    assert {k: v for k, v in staged.items() if k != "pairs"} == {
        k: v for k, v in columns_of(Sample).items() if k != "pairs"}


def test_a_declared_type_wins_and_other_marks_are_looked_through() -> None:
    assert duck_type(Annotated[str, Duck("UUID")]) == "UUID"
    assert duck_type(Annotated[int, "a note"]) == "BIGINT"
    assert duck_type(list[list[int]]) == "BIGINT[][]"


def test_a_type_without_a_duckdb_type_is_refused() -> None:
    with pytest.raises(TypeError, match="no DuckDB type"):
        duck_type(dict[str, str])
    with pytest.raises(TypeError, match="one type"):
        duck_type(int | str)
    with pytest.raises(TypeError, match="NamedTuple"):
        columns_of(tuple)

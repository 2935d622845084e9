"""DuckDB column types read from a row type's annotations, so a ledger column is declared once: as a field.

A field's Python type gives its DuckDB type (`str` VARCHAR, `int` BIGINT, `float` DOUBLE, `bool` BOOLEAN,
`datetime` TIMESTAMPTZ, `list[T]` T[]; `| None` changes nothing, every column is nullable). A column that
needs another type says so with `Annotated[..., Duck("TYPE")]`: the aliases below.
"""

from __future__ import annotations

import types
from collections import namedtuple
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel

from shared.events import SeatPlan, Skip

PLAIN: dict[Any, str] = {
    str: "VARCHAR", int: "BIGINT", float: "DOUBLE", bool: "BOOLEAN", datetime: "TIMESTAMPTZ",
}


@dataclass(frozen=True)
class Duck:
    """The DuckDB type of a column whose Python type alone would give another one. `staged`: the type a
    batch's values are appended as, when that differs (the merge casts them to `name`)."""

    name: str
    staged: str | None = None


def struct_list(model: type[BaseModel]) -> Duck:
    """A list of a pydantic model's dumps, stored as a list of STRUCTs with the model's fields. The fold
    hands it over as the list's JSON text and DuckDB builds the STRUCTs when the batch is merged: the
    appender converting every nested value from Python cost 22 us a panel, the JSON text 10 and the cast 2."""
    fields = ", ".join(f"{name} {duck_type(info.annotation)}" for name, info in model.model_fields.items())
    return Duck(f"STRUCT({fields})[]", staged="JSON")


def duck_type(annotation: Any) -> str:
    """The DuckDB type of one field's annotation; a type with none is refused, so a row type that the
    tables cannot hold fails at import, not at the first append."""
    if get_origin(annotation) is Annotated:
        declared = [mark for mark in annotation.__metadata__ if isinstance(mark, Duck)]
        if declared:
            return declared[0].name
        return duck_type(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        kinds = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(kinds) != 1:
            raise TypeError(f"a column holds one type, not {annotation}")
        return duck_type(kinds[0])
    if get_origin(annotation) is list:
        return f"{duck_type(get_args(annotation)[0])}[]"
    if annotation not in PLAIN:
        raise TypeError(f"no DuckDB type for {annotation}: annotate it with Duck")
    return PLAIN[annotation]


def staged_type(annotation: Any) -> str | None:
    """The type a column's values are appended as, when it is not its stored type."""
    if get_origin(annotation) in (Union, types.UnionType):
        kinds = [arg for arg in get_args(annotation) if arg is not type(None)]
        return staged_type(kinds[0]) if len(kinds) == 1 else None
    if get_origin(annotation) is Annotated:
        return next((mark.staged for mark in annotation.__metadata__ if isinstance(mark, Duck)), None)
    return None


def _fields(row: type[tuple[Any, ...]]) -> tuple[tuple[str, ...], dict[str, Any]]:
    fields: tuple[str, ...] = getattr(row, "_fields", ())
    if not fields:
        raise TypeError(f"{row.__name__} is not a NamedTuple")
    return fields, get_type_hints(row, include_extras=True)


def columns_of(row: type[tuple[Any, ...]]) -> dict[str, str]:
    """Column name → DuckDB type, in the row type's field order (the order rows are appended in)."""
    fields, hints = _fields(row)
    return {name: duck_type(hints[name]) for name in fields}


def staged_columns_of(row: type[tuple[Any, ...]]) -> dict[str, str]:
    """Column name → the DuckDB type a batch's rows are appended as (a stage's columns)."""
    fields, hints = _fields(row)
    return {name: staged_type(hints[name]) or duck_type(hints[name]) for name in fields}


def row_type(name: str, fields: list[tuple[str, Any]]) -> Any:
    """A row type whose fields are declared elsewhere (a table holding another record's fields), with the
    annotations `columns_of` reads."""
    row = namedtuple(name, [field for field, _ in fields])  # type: ignore[misc]
    row.__annotations__ = dict(fields)
    return row


Integer = Annotated[int, Duck("INTEGER")]  # small counts and codes: HTTP status, attempts, turns
Json = Annotated[str, Duck("JSON")]  # a JSON document, queried with DuckDB's JSON functions
# A panel's plan and its skipped seats: STRUCTs with the fields of the events' own models (handed over as
# the lists' JSON text).
SeatPlans = Annotated[str, struct_list(SeatPlan)]
Skips = Annotated[str, struct_list(Skip)]

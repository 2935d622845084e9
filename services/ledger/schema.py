"""The ledger's DuckDB tables: typed columns, keys, and how a batch's rows meet the rows already there.

Each table's columns are its row type's fields in `fold`, typed by their annotations (`columns`), so the
mapping and the schema cannot drift apart. `ledger_position` holds the last stream sequence applied; it is
written in the same transaction as the rows, so a crash never applies a batch twice or loses one.
`ledger_schema` holds a fingerprint of the tables' shape: a file made by another version is folded again
from the stream.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from services.ledger import fold, usage_lines
from services.ledger.columns import columns_of, staged_columns_of

POSITION_TABLE = "ledger_position"
POSITION_DDL = f"CREATE TABLE IF NOT EXISTS {POSITION_TABLE} (stream VARCHAR PRIMARY KEY, seq BIGINT)"

# append: rows go straight in, with no key index: the table's key is the stream sequence, and the stream
#         position written in the same transaction already applies each sequence once. (An index on this,
#         the largest table, cost 15% of the fold at 1M seats: 15,900 against 18,200 events/s.)
# first:  the first row for a key wins (`INSERT OR IGNORE`): a seat completed twice is stored once.
# fill:   a key's columns keep their first non-null value (a panel seated, then answered); its `seq`, when
#         it has one, is the latest sequence folded into it.
# latest: the row of the highest stream sequence wins (the last quota a provider reported).
# staged: rows held for one batch only (a temporary table), to derive another table's rows; never stored.
Merge = Literal["append", "first", "fill", "latest", "staged"]


@dataclass(frozen=True)
class Table:
    """A table is its row type (the columns, from its annotations), its key and its merge rule."""

    name: str
    rows_attr: str | None  # the `fold.Rows` field holding this table's rows (None: derived in SQL)
    row: type[tuple[Any, ...]]
    key: tuple[str, ...]
    merge: Merge
    derived: str | None = None  # a SELECT of this table's rows from other tables' stages, in column order
    columns: dict[str, str] = field(init=False)  # column → DuckDB type, in the row type's order
    stage_columns: dict[str, str] = field(init=False)  # column → the type a batch is appended as

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", columns_of(self.row))
        object.__setattr__(self, "stage_columns", staged_columns_of(self.row))
        if missing := [k for k in self.key if k not in self.columns]:
            raise ValueError(f"{self.name}: key {missing} is not a column of {self.row.__name__}")
        if self.merge == "latest" and "seq" not in self.columns:
            raise ValueError(f"{self.name}: a `latest` table needs the stream sequence (`seq`) of its rows")
        if (self.rows_attr is None) == (self.derived is None):
            raise ValueError(f"{self.name}: rows come from the fold's `Rows` or from a SELECT, one of them")

    @property
    def stage(self) -> str:
        """A temporary table of the same shape that a batch is appended to before it is merged."""
        return f"stage_{self.name}"

    def stage_sql(self) -> str:
        cols = ", ".join(f'"{name}" {kind}' for name, kind in self.stage_columns.items())
        return f"CREATE TEMP TABLE {self.stage} ({cols})"

    def _staged_rows(self) -> str:
        """The stage's rows with the table's column types."""
        if self.stage_columns == self.columns:
            return self.stage
        cols = ", ".join(
            f'"{name}"' if self.stage_columns[name] == kind else f'"{name}"::{kind} AS "{name}"'
            for name, kind in self.columns.items()
        )
        return f"(SELECT {cols} FROM {self.stage})"

    def create_sql(self) -> str:
        cols = ", ".join(f'"{name}" {kind}' for name, kind in self.columns.items())
        if self.merge == "append":
            return f"CREATE TABLE IF NOT EXISTS {self.name} ({cols})"
        return f"CREATE TABLE IF NOT EXISTS {self.name} ({cols}, PRIMARY KEY ({', '.join(self.key)}))"

    def merge_sql(self) -> str:
        """The statement that moves the staged (or derived) rows into the table (not for `staged` ones)."""
        source = f"({self.derived})" if self.derived else self._staged_rows()
        if self.merge == "append":
            return f"INSERT INTO {self.name} SELECT * FROM {source}"
        if self.merge == "first":
            return f"INSERT OR IGNORE INTO {self.name} SELECT * FROM {source}"
        others = [c for c in self.columns if c not in self.key]
        key = ", ".join(self.key)
        upsert = f"INSERT INTO {self.name} SELECT * FROM {source} ON CONFLICT ({key}) DO UPDATE"
        if self.merge == "latest":
            sets = ", ".join(f'"{c}" = excluded."{c}"' for c in others)
            return f"{upsert} SET {sets} WHERE excluded.seq > {self.name}.seq"
        sets = ", ".join(
            f'"{c}" = greatest({self.name}."{c}", excluded."{c}")' if c == "seq"
            else f'"{c}" = coalesce({self.name}."{c}", excluded."{c}")' for c in others
        )
        return f"{upsert} SET {sets}"

    def rows_of(self, rows: fold.Rows) -> Sequence[tuple[Any, ...]]:
        if self.rows_attr is None:
            return []
        held = getattr(rows, self.rows_attr)
        return list(held.values()) if isinstance(held, dict) else held


EVENTS = Table("events_applied", "events", fold.EventRow, key=("seq",), merge="append")
PANELS = Table("panels", "panels", fold.PanelRow, key=("panel",), merge="fill")
SEATS = Table("seats", "seats", fold.SeatRow, key=("call",), merge="first")
CALLS_USED = Table("calls_used", "calls_used", fold.CallUsedRow, key=("call",), merge="staged")
USAGE = Table(
    "usage", None, fold.UsageRow, key=("call",), merge="first",
    derived=usage_lines.select(list(columns_of(fold.UsageRow)), SEATS.stage, CALLS_USED.stage),
)
ROUTE_TURNS = Table("route_turns", "route_turns", fold.RouteTurnRow, key=("id",), merge="first")
LIMITS_LEARNED = Table("limits_learned", "limits_learned", fold.LimitLearnedRow, key=("id",), merge="first")
QUOTA_RECORDS = Table(
    "quota_records", "quota_records", fold.QuotaRow, key=("connection", "alias", "metric", "period"),
    merge="latest",
)
VERDICTS = Table("verdicts", "verdicts", fold.VerdictRow, key=("id",), merge="first")
CONFIG_CHANGES = Table("config_changes", "config_changes", fold.ConfigRow, key=("id",), merge="first")
COOLDOWNS = Table("cooldowns", "cooldowns", fold.CooldownRow, key=("id",), merge="first")
ALERTS = Table("alerts", "alerts", fold.AlertRow, key=("id",), merge="first")
PROBES = Table("probes", "probes", fold.ProbeRow, key=("call",), merge="first")
JOB_RUNS = Table("job_runs", "job_runs", fold.JobRunRow, key=("id",), merge="first")
SUITE_ANSWERS = Table("suite_answers", "suite_answers", fold.SuiteAnswerRow, key=("id",), merge="first")

# Stored tables (`TABLES`), and the stages that only feed derived ones (`STAGES`).
STAGES: tuple[Table, ...] = (CALLS_USED,)
TABLES: tuple[Table, ...] = (
    EVENTS, PANELS, SEATS, VERDICTS, CONFIG_CHANGES, COOLDOWNS,
    USAGE, ROUTE_TURNS, LIMITS_LEARNED, QUOTA_RECORDS, ALERTS, PROBES, JOB_RUNS, SUITE_ANSWERS,
)

SCHEMA_TABLE = "ledger_schema"
SCHEMA_DDL = f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (fingerprint VARCHAR PRIMARY KEY)"
FINGERPRINT = hashlib.sha256(
    "\n".join([POSITION_DDL, *(t.create_sql() for t in TABLES)]).encode()
).hexdigest()[:16]

ALL_TABLE_NAMES: tuple[str, ...] = (*(t.name for t in TABLES), POSITION_TABLE, SCHEMA_TABLE)

"""`bench ledger export`: the tables as Parquet, partitioned by UTC day, incrementally. Pure: the statements,
the names and the checks; `Store.export` runs them.

The ledger writes the files itself (it holds the DuckDB file, and its database may write only into its
export folder), one folder per export, in one read snapshot: every table up to the same moment, while the
fold goes on. A table's rows are taken by stream sequence: those after the mark the asker already holds.
A row that changes later (a panel answered after it was seated, a newer quota record) gets a newer `seq`,
so it comes again in a later export: readers keep a key's row of the highest `seq`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from pathlib import Path

from services.ledger import schema

# The UTC day a row belongs to: when it happened (a panel answered before its plan was folded: its answer).
AT = '"at"'
DAY_OF = {"panels": 'coalesce("at", "answered_at")', "quota_records": '"observed_at"'}
TABLES: tuple[schema.Table, ...] = schema.TABLES
EXPORT_ID = re.compile(r"^x\d{8}-\d{6}-[0-9a-f]{4}$")
CHUNK_BYTES = 384 * 1024  # 512 kB once in base64: well under a NATS message's 1 MB
KEEP_S = 3600.0  # an export's folder is swept at the next export after this long

for _table in TABLES:  # what the statements below take for granted
    if "seq" not in _table.columns or "day" in _table.columns:
        raise TypeError(f"{_table.name}: an exported table has `seq` and no `day` column")
    if _table.name not in DAY_OF and "at" not in _table.columns:
        raise TypeError(f"{_table.name}: say which column gives its day (DAY_OF)")


def day_of(table: schema.Table) -> str:
    return f"CAST({DAY_OF.get(table.name, AT)} AS DATE)"


def window(table: schema.Table, after: int, upto: int, since: date | None) -> str:
    where = f"seq > {int(after)} AND seq <= {int(upto)}"
    if since is not None:
        where += f" AND {day_of(table)} >= DATE '{since.isoformat()}'"
    return where


def count_sql(table: schema.Table, after: int, upto: int, since: date | None) -> str:
    return f"SELECT count(*) FROM {table.name} WHERE {window(table, after, upto, since)}"


def copy_sql(
    table: schema.Table, folder: Path, export: str, after: int, upto: int, since: date | None
) -> str:
    """The rows of the window as `<folder>/<table>/day=<day>/part-<export>-<n>.parquet`: hive partitions,
    so a reader gets `day` back as a column, and file names that never meet another export's."""
    if not EXPORT_ID.match(export):
        raise ValueError(f"not an export id: {export!r}")
    target = str(folder / table.name).replace("'", "''")
    return (
        f"COPY (SELECT *, {day_of(table)} AS day FROM {table.name} "
        f"WHERE {window(table, after, upto, since)}) "
        f"TO '{target}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (day), "
        f"FILENAME_PATTERN 'part-{export}-{{i}}')"
    )


def file_in(root: Path, export: str, path: str) -> Path:
    """A file an asker names, only when it is one of that export's Parquet files (nothing outside it)."""
    if not EXPORT_ID.match(export):
        raise ValueError(f"not an export id: {export!r}")
    folder = (root / export).resolve()
    found = (folder / path).resolve()
    if not found.is_relative_to(folder) or found.suffix != ".parquet" or not found.is_file():
        raise ValueError(f"no file {path!r} in export {export}")
    return found


def stale(folders: Iterable[tuple[str, float]], now: float) -> list[str]:
    """The export folders (name, modified) old enough to sweep; anything not named like one stays."""
    return [name for name, modified in folders if EXPORT_ID.match(name) and now - modified > KEEP_S]

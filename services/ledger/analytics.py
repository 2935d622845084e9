"""Read-only analytics over the ledger's tables: one SELECT, in a read-only transaction, capped in rows,
reply size and time.

Four locks, each enough on its own for what it guards: DuckDB's parser must see exactly one statement
of type SELECT (a `WITH` and DuckDB's `FROM`-first form included); the statement runs inside
`BEGIN TRANSACTION READ ONLY`, so even a data-modifying CTE is refused by the engine; the database has
external access switched off and its configuration locked (`Store` does it at open), so no file (but the
ledger's own Parquet exports), extension or environment is reachable, and no `SET` can undo it; and a timer
interrupts a query that runs too long. The transaction is always rolled back.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import duckdb

from shared.commands import RpcError, SqlReply

TIMEOUT_S = 10.0
# A NATS message holds 1 MB by default: rows stop (marked truncated) before the reply nears it.
MAX_REPLY_BYTES = 512_000


def refusal(status: int, message: str) -> SqlReply:
    return SqlReply(ok=False, error=RpcError(status=status, message=message))


def check(cur: duckdb.DuckDBPyConnection, sql: str) -> SqlReply | None:
    """None when `sql` is one SELECT statement, else the refusal to answer."""
    try:
        statements = cur.extract_statements(sql)
    except duckdb.Error as exc:
        return refusal(400, f"not valid SQL: {exc}")
    if len(statements) != 1:
        return refusal(400, f"one statement at a time (this holds {len(statements)})")
    if statements[0].type != duckdb.StatementType.SELECT:
        return refusal(400, "only SELECT (or WITH … SELECT) queries are answered: the ledger is read-only")
    return None


def cell(value: Any) -> Any:
    """A DuckDB value as JSON: times as ISO 8601, decimals as numbers, blobs as base64, nested as nested."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): cell(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [cell(v) for v in value]
    return str(value)


def run(cur: duckdb.DuckDBPyConnection, sql: str, max_rows: int, timeout_s: float = TIMEOUT_S) -> SqlReply:
    """Answer `sql` on `cur` (a cursor of its own, closed by the caller) with at most `max_rows` rows."""
    refused = check(cur, sql)
    if refused is not None:
        return refused
    timer = threading.Timer(timeout_s, cur.interrupt)
    cur.execute("BEGIN TRANSACTION READ ONLY")
    timer.start()
    try:
        cur.execute(sql)
        columns = [d[0] for d in cur.description or []]
        types = [str(d[1]) for d in cur.description or []]
        found = cur.fetchmany(max_rows + 1)
    except duckdb.InterruptException:
        return refusal(408, f"the query ran longer than {timeout_s:g}s and was stopped")
    except duckdb.Error as exc:
        return refusal(400, str(exc))
    finally:
        timer.cancel()
        with contextlib.suppress(duckdb.Error):
            cur.execute("ROLLBACK")
    rows: list[list[Any]] = []
    size = 0
    for row in found[:max_rows]:
        line = [cell(v) for v in row]
        size += len(json.dumps(line, ensure_ascii=False).encode())
        if size > MAX_REPLY_BYTES:
            return SqlReply(columns=columns, types=types, rows=rows, truncated=True)
        rows.append(line)
    return SqlReply(columns=columns, types=types, rows=rows, truncated=len(found) > max_rows)

"""The ledger's DuckDB file: apply a batch of rows with its stream position in one transaction; read facts.

DuckDB lets one process hold a file read-write, and one connection must not be used by two threads at
once: the fold has its own cursor (with its staging tables), every read opens a fresh cursor. Calls here
block; the service runs them in threads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

import duckdb

from services.ledger import schema
from services.ledger.fold import Rows
from services.ledger.offloads import Judged, SeatFacts, StoredVerdict
from shared import subjects


class LedgerFileBusy(RuntimeError):
    """Another process holds the DuckDB file (a running ledger)."""


def wal_of(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def discard(path: Path) -> None:
    """Delete the file and its WAL, after checking no process holds it (deleting a held file would leave
    its holder writing to a ghost)."""
    if path.exists():
        try:
            duckdb.connect(str(path)).close()
        except duckdb.IOException as exc:
            raise LedgerFileBusy(f"{path} is held by another process: {exc}") from exc
    for file in (path, wal_of(path)):
        file.unlink(missing_ok=True)


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(str(path))
        except duckdb.IOException as exc:
            raise LedgerFileBusy(f"{path} is held by another process: {exc}") from exc
        self.con.execute(schema.POSITION_DDL)
        for table in schema.TABLES:
            self.con.execute(table.create_sql())
        self._fold = self.con.cursor()
        for table in schema.TABLES:
            if table.merge != "strict":
                self._fold.execute(f"CREATE TEMP TABLE {table.stage} AS SELECT * FROM {table.name} LIMIT 0")

    def close(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self._fold.close()
            self.con.execute("CHECKPOINT")
        self.con.close()

    # ------------------------------------------------------------ the fold

    def position(self) -> int:
        cur = self.con.cursor()
        try:
            row = cur.execute(
                f"SELECT seq FROM {schema.POSITION_TABLE} WHERE stream = ?", [subjects.EVENTS_STREAM]
            ).fetchone()
        finally:
            cur.close()
        return int(row[0]) if row else 0

    def apply(self, rows: Rows, seq: int) -> None:
        """Write a batch's rows and the new position atomically: all of it, or (on a crash) none of it."""
        cur = self._fold
        cur.begin()
        try:
            for table in schema.TABLES:
                batch = table.rows_of(rows)
                if not batch:
                    continue
                target = table.name if table.merge == "strict" else table.stage
                appender = cur.appender(target)
                appender.append_rows(batch)
                appender.flush()
                if table.merge != "strict":
                    cur.execute(table.merge_sql())
                    cur.execute(f"DELETE FROM {table.stage}")
            cur.execute(
                f"INSERT INTO {schema.POSITION_TABLE} VALUES (?, ?) "
                "ON CONFLICT (stream) DO UPDATE SET seq = excluded.seq",
                [subjects.EVENTS_STREAM, seq],
            )
            cur.commit()
        except BaseException:
            cur.rollback()
            raise

    # ------------------------------------------------------------ reads

    def verdict_facts(self, call: str) -> tuple[SeatFacts | None, StoredVerdict | None]:
        cur = self.con.cursor()
        try:
            seat = cur.execute(
                "SELECT call, alias, seat, task, status, seconds, error FROM seats WHERE call = ?", [call]
            ).fetchone()
            verdict = cur.execute(
                'SELECT seq, "at", useful, note, real_claims, false_claims FROM verdicts '
                "WHERE call = ? ORDER BY seq DESC LIMIT 1",
                [call],
            ).fetchone()
        finally:
            cur.close()
        facts = SeatFacts(*seat) if seat else None
        stored = None
        if verdict:
            seq, at, useful, note, real, false = verdict
            stored = StoredVerdict(seq, at, useful, note, tuple(real), tuple(false))
        return facts, stored

    def pending_facts(self, calls: Iterable[str]) -> dict[str, tuple[str, bool]]:
        """(status, judged) for each of `calls` that is a seat."""
        cur = self.con.cursor()
        try:
            found = cur.execute(
                "SELECT s.call, s.status, EXISTS (SELECT 1 FROM verdicts v WHERE v.call = s.call) "
                "FROM seats s WHERE s.call IN (SELECT unnest(?::VARCHAR[]))",
                [list(dict.fromkeys(calls))],
            ).fetchall()
        finally:
            cur.close()
        return {call: (status, bool(judged)) for call, status, judged in found}

    def judged(self, collection: str) -> list[Judged]:
        """Every judged call whose task names the collection, with its latest verdict."""
        cur = self.con.cursor()
        try:
            found = cur.execute(
                'SELECT s.alias, s.task, v.useful, v.note, v."at" FROM seats s JOIN ('
                '  SELECT call, useful, note, "at" FROM verdicts'
                "  QUALIFY row_number() OVER (PARTITION BY call ORDER BY seq DESC) = 1"
                ") v ON v.call = s.call WHERE contains(s.task, ?)",
                [f"({collection},"],
            ).fetchall()
        finally:
            cur.close()
        return [Judged(*row) for row in found]

    def counts(self) -> dict[str, int]:
        cur = self.con.cursor()
        try:
            out = {}
            for name in schema.ALL_TABLE_NAMES:
                row = cur.execute(f"SELECT count(*) FROM {name}").fetchone()
                out[name] = int(row[0]) if row else 0
        finally:
            cur.close()
        return out

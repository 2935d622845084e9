"""The ledger's DuckDB file: apply a batch of rows with its stream position in one transaction; read facts.

DuckDB lets one process hold a file read-write, and one connection must not be used by two threads at
once: the fold has its own cursor (with its staging tables), every read opens a fresh cursor. Calls here
block; the service runs them in threads. The database never reaches outside its file and its export folder
(no file readers, extensions or environment; the configuration is then locked, so no statement can undo it),
and reports times in UTC.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import structlog

from services.ledger import analytics, export, report, schema
from services.ledger.fold import Rows
from services.ledger.offloads import OFFLOAD_PURPOSES, Judged, SeatFacts, StoredVerdict
from services.ledger.quotas import (
    CooldownFact,
    LearnedFact,
    LimitsChange,
    QuotaFact,
    QuotaFacts,
    sent_windows,
)
from shared import subjects
from shared.commands import (
    PACING_BUCKET_S,
    PACING_EXACT_S,
    EvidenceLine,
    EvidenceReply,
    ExportedFile,
    ExportReply,
    ExportRequest,
    JudgedClaim,
    PacingReply,
    ReportReply,
    ReportRequest,
    SentCount,
    SentLine,
    SqlReply,
    SuiteModelLine,
    SuiteResultsReply,
    SuiteShapeLine,
    SuiteWrongLine,
    UsageLine,
    UsageRequest,
)

log = structlog.get_logger("ledger")

OFFLOADS = "purpose IN ({})".format(", ".join(f"'{p}'" for p in OFFLOAD_PURPOSES))
USAGE_COLUMNS = ", ".join(f'"{name}"' for name in UsageLine.model_fields)
# A caller's windows hold a recent attempt with its call id; the call ended after that attempt began, so
# every call that ended within PACING_EXACT_S (plus this margin for the callers' clocks) comes back exact,
# with its id, however long ago it started: the caller skips the ones it already counts.
PACING_CLOCK_MARGIN_S = 30.0


# Two sets of stage tables, so the next batch is staged (Python, holding the interpreter lock) while the
# last one is merged and committed (DuckDB's own work, which releases it): `services/ledger/folding.py`.
SLOTS = 2
STAGE_TABLES = tuple(t for t in (*schema.TABLES, *schema.STAGES) if t.derived is None)


class Slot:
    """One cursor (its own connection, so its own temporary stage tables) and whether its stage holds rows."""

    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self.cur = cur
        self.lock = threading.Lock()  # a cursor is used by one thread at a time
        self.dirty = False
        for table in STAGE_TABLES:
            cur.execute(table.stage_sql())


def emptied(cur: duckdb.DuckDBPyConnection, table: schema.Table) -> None:
    """A stage table is made again, not emptied: DuckDB keeps the memory of the rows deleted from a temporary
    table, so a `DELETE` after each batch left 242 MB held after 353,000 events (14 MB made again)."""
    cur.execute(f"DROP TABLE {table.stage}")
    cur.execute(table.stage_sql())


@dataclass(frozen=True)
class Staged:
    """A batch waiting in a slot's stage tables: the stages that hold rows, and its first stream sequence."""

    slot: int
    tables: tuple[str, ...]
    first: int | None


class AppliedTwice(RuntimeError):
    """A batch reaching back to sequences already applied (a bug in whoever hands batches out)."""


class LedgerFileBusy(RuntimeError):
    """Another process holds the DuckDB file (a running ledger)."""


# BENCH_DUCKDB_MEMORY_LIMIT. DuckDB keeps in its buffer pool every table block it wrote or read until the cap
# (the ledger's growth in issue 16's soak: `duckdb_memory()` showed table blocks growing with the rows), so
# the cap is what the ledger's memory settles at, and a share of the machine (it was 25%: 6 GB here) let it
# grow for days. The key indexes are evictable: folding 1M seats under a 64MB cap they held 10-14 MB. What
# must fit is the data not yet checkpointed (up to CHECKPOINT_THRESHOLD) plus a batch's stage: 64MB ran
# out of memory appending a 20,000-event stage. At 192MB a 1M-seat fold runs as fast as at 25%
# (`benchmarks.ledger`, 2026-12-06: 25,490 against 25,985 events/s; report 0.29 against 0.25 s).
MEMORY_LIMIT = "192MB"


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


def exports_of(path: Path) -> Path:
    """The one folder outside its file the ledger may write (Parquet exports), next to the file."""
    return path.with_name(path.stem + "-exports")


# DuckDB checkpoints (writes the WAL into the file, the tables' key indexes among it) each time the WAL
# passes this size (BENCH_DUCKDB_CHECKPOINT_THRESHOLD). At its default (16 MB) a rebuild checkpointed every
# few batches and slowed as the tables grew (the indexes rewritten each time): 9,000 events per CPU second
# after 300,000 seats, against 12,500 with 256 MB (`benchmarks.ledger`, on the fold of 2026-12-03). What is
# not yet checkpointed is held in memory, though: with 256 MB the ledger peaked at 517 MB in `make bench`,
# 410 with 64 MB, and 64 MB folds 1M seats as fast on today's fold (25,672 against 25,401 events/s).
# The price: a WAL of up to this size replayed after a crash.
CHECKPOINT_THRESHOLD = "64MB"


def connect(path: Path, threads: int = 1, memory_limit: str = MEMORY_LIMIT,
            checkpoint: str = CHECKPOINT_THRESHOLD) -> duckdb.DuckDBPyConnection:
    """`threads` is DuckDB's own worker count: the fold's small transactions gain nothing from more, and
    on a small machine a multi-threaded commit takes every core from the request path for its moment.
    `memory_limit` caps DuckDB's buffer pool (by default 80% of the machine's memory, which it keeps once
    used): the fold's transactions are small, and a larger query spills to the file's temp folder."""
    exports = exports_of(path)
    exports.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(
            str(path), config={"threads": max(1, threads), "checkpoint_threshold": checkpoint,
                               "memory_limit": memory_limit}
        )
    except duckdb.IOException as exc:
        raise LedgerFileBusy(f"{path} is held by another process: {exc}") from exc
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    con.execute("SET allowed_directories = [?]", [f"{exports.resolve()}/"])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def made_by_another_version(con: duckdb.DuckDBPyConnection) -> bool:
    """The file holds ledger tables of another shape (or of the days before shapes were fingerprinted)."""
    names = {row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    if schema.POSITION_TABLE not in names:
        return False
    if schema.SCHEMA_TABLE not in names:
        return True
    found = con.execute(f"SELECT fingerprint FROM {schema.SCHEMA_TABLE}").fetchall()
    return found != [(schema.FINGERPRINT,)]


class Store:
    def __init__(self, path: Path, threads: int = 1, memory_limit: str = MEMORY_LIMIT,
                 checkpoint: str = CHECKPOINT_THRESHOLD) -> None:
        self.path = path
        self.threads = threads
        path.parent.mkdir(parents=True, exist_ok=True)
        self.con = connect(path, threads, memory_limit, checkpoint)
        if made_by_another_version(self.con):
            # The file is a fold of the stream: one of another shape is folded again, from sequence 1.
            log.warning("ledger_schema_changed", path=str(path), fingerprint=schema.FINGERPRINT)
            self.con.close()
            discard(path)
            self.con = connect(path, threads, memory_limit, checkpoint)
        self.con.execute(schema.POSITION_DDL)
        self.con.execute(
            f"INSERT OR IGNORE INTO {schema.POSITION_TABLE} VALUES (?, 0)", [subjects.EVENTS_STREAM]
        )
        self.con.execute(schema.SCHEMA_DDL)
        self.con.execute(f"INSERT OR IGNORE INTO {schema.SCHEMA_TABLE} VALUES (?)", [schema.FINGERPRINT])
        for table in schema.TABLES:
            self.con.execute(table.create_sql())
        self._slots = [Slot(self.con.cursor()) for _ in range(SLOTS)]

    def close(self) -> None:
        with contextlib.suppress(duckdb.Error):
            for slot in self._slots:
                slot.cur.close()
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

    def stage(self, rows: Rows, slot: int = 0) -> Staged:
        """Append a batch's rows to one slot's stage tables (temporary, so no transaction and no WAL): the
        Python half of a write, which `commit` then moves into the tables."""
        held = self._slots[slot]
        with held.lock:
            if held.dirty:  # a batch staged and never committed (its fold was stopped): not this one's rows
                for table in STAGE_TABLES:
                    emptied(held.cur, table)
            held.dirty = True
            filled = []
            for table in STAGE_TABLES:
                batch = table.rows_of(rows)
                if batch:
                    appender = held.cur.appender(table.stage)
                    appender.append_rows(batch)
                    appender.flush()
                    filled.append(table.stage)
        first = min((row.seq for row in rows.events), default=None)
        return Staged(slot, tuple(filled), first)

    def commit(self, staged: Staged, seq: int) -> None:
        """Move a staged batch into the tables and the position to `seq` in one transaction: all of it, or
        (on a crash or an error) none of it, the stage then left as it was, to be committed again."""
        held = self._slots[staged.slot]
        with held.lock:
            cur = held.cur
            cur.begin()
            try:
                for table in schema.TABLES:  # a derived table reads other tables' stages: merged first
                    if table.stage in staged.tables or (table.derived and staged.tables):
                        cur.execute(table.merge_sql())
                for table in STAGE_TABLES:
                    if table.stage in staged.tables:
                        emptied(cur, table)
                # The batch must start after the stored position: a sequence applied twice fails the batch.
                first = seq if staged.first is None else staged.first
                moved = cur.execute(
                    f"UPDATE {schema.POSITION_TABLE} SET seq = ? WHERE stream = ? AND seq < ? RETURNING seq",
                    [seq, subjects.EVENTS_STREAM, first],
                ).fetchall()
                if not moved:
                    raise AppliedTwice(f"a batch from sequence {first} is at or before the ledger's position")
                cur.commit()
            except BaseException:
                cur.rollback()
                raise
            held.dirty = False

    def apply(self, rows: Rows, seq: int) -> None:
        """Write a batch's rows and the new position atomically (`stage`, then `commit`)."""
        self.commit(self.stage(rows), seq)

    # ------------------------------------------------------------ reads

    def verdict_facts(self, call: str) -> tuple[SeatFacts | None, StoredVerdict | None]:
        cur = self.con.cursor()
        try:
            seat = cur.execute(
                "SELECT s.call, s.alias, s.seat, s.task, s.status, s.seconds, s.error, s.purpose, "
                "coalesce(p.shape, '') FROM seats s LEFT JOIN panels p ON p.panel = s.panel "
                f"WHERE s.call = ? AND s.{OFFLOADS}",
                [call],
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
        """(status, judged) for each of `calls` that is an offload."""
        cur = self.con.cursor()
        try:
            found = cur.execute(
                "SELECT s.call, s.status, EXISTS (SELECT 1 FROM verdicts v WHERE v.call = s.call) "
                f"FROM seats s WHERE s.call IN (SELECT unnest(?::VARCHAR[])) AND s.{OFFLOADS}",
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
                f") v ON v.call = s.call WHERE contains(s.task, ?) AND s.{OFFLOADS}",
                [f"({collection},"],
            ).fetchall()
        finally:
            cur.close()
        return [Judged(*row) for row in found]

    def quota_facts(self, now: datetime) -> QuotaFacts:
        """Everything L-7 shows, as stored: quota records with what was sent on their model since (calls
        folded after the record), per-connection sums over L-2's windows, active rests, limits."""
        day_from, month_from = sent_windows(now)
        cur = self.con.cursor()
        try:
            quotas = cur.execute(
                "SELECT q.connection, q.alias, q.metric, q.period, q.observed_at, q.allowed, q.remaining, "
                "q.reset_at, q.source, coalesce(sum(u.attempts), 0), coalesce(sum(u.tokens_in), 0), "
                "coalesce(sum(u.tokens_out), 0) FROM quota_records q LEFT JOIN usage u "
                "ON u.connection = q.connection AND u.alias = q.alias AND u.seq > q.seq GROUP BY ALL"
            ).fetchall()
            sent = cur.execute(
                "SELECT connection, "
                "coalesce(sum(attempts) FILTER (WHERE t >= $day), 0), "
                "coalesce(sum(tokens_in + tokens_out) FILTER (WHERE t >= $day), 0), "
                "coalesce(sum(attempts) FILTER (WHERE t >= $month), 0), "
                "coalesce(sum(tokens_in + tokens_out) FILTER (WHERE t >= $month), 0) "
                "FROM usage WHERE t >= least($day, $month) GROUP BY connection",
                {"day": day_from, "month": month_from},
            ).fetchall()
            cooldowns = cur.execute(
                'SELECT alias, connection, "until", why FROM cooldowns WHERE "until" > ?', [now]
            ).fetchall()
            limits = cur.execute(
                "SELECT seq, \"at\", \"by\", change FROM config_changes WHERE type = 'limits_saved'"
            ).fetchall()
            learned = cur.execute(
                'SELECT alias, connection, axis, allowed, "at", call FROM limits_learned ORDER BY seq'
            ).fetchall()
        finally:
            cur.close()
        return QuotaFacts(
            quotas=[QuotaFact(*row) for row in quotas],
            sent=[
                SentLine(connection=c, day=SentCount(requests=d_req, tokens=d_tok),
                         month=SentCount(requests=m_req, tokens=m_tok))
                for c, d_req, d_tok, m_req, m_tok in sent
            ],
            cooldowns=[CooldownFact(*row) for row in cooldowns],
            limits=[LimitsChange(seq, at, by, json.loads(change)) for seq, at, by, change in limits],
            learned=[LearnedFact(*row) for row in learned],
        )

    def usage(self, req: UsageRequest) -> list[UsageLine]:
        """The newest usage lines (stream order) matching the request's filters."""
        where, params = [], []
        for column in ("connection", "alias", "purpose"):
            value = getattr(req, column)
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        if req.since is not None:
            since = req.since if req.since.tzinfo else req.since.replace(tzinfo=UTC)
            where.append("t >= ?")
            params.append(since)
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        cur = self.con.cursor()
        try:
            found = cur.execute(
                f"SELECT {USAGE_COLUMNS} FROM usage {clause}ORDER BY seq DESC LIMIT ?", [*params, req.limit]
            )
            names = [d[0] for d in found.description or []]
            rows = found.fetchall()
        finally:
            cur.close()
        return [UsageLine(**dict(zip(names, row, strict=True))) for row in rows]

    def evidence(self, since: datetime) -> EvidenceReply:
        """HL-5's evidence since `since`: every probe row, each model's latest answered offload, and each
        model's latest restore."""
        cur = self.con.cursor()
        try:
            probes = cur.execute(
                'SELECT alias, "at", answered, failure, detail FROM probes WHERE "at" >= ? ORDER BY seq',
                [since],
            ).fetchall()
            answers = cur.execute(
                """SELECT alias, max("at") FROM seats WHERE "at" >= ? AND status = 'ok' """
                "AND purpose <> 'probe' "
                "GROUP BY alias", [since]
            ).fetchall()
            restores = cur.execute(
                """SELECT name, max("at") FROM config_changes WHERE type = 'model_restored' GROUP BY name"""
            ).fetchall()
        finally:
            cur.close()
        rows = [EvidenceLine(alias=a, at=at, answered=ok, failure=f, detail=d) for a, at, ok, f, d in probes]
        rows += [EvidenceLine(alias=a, at=at, answered=True, probe=False) for a, at in answers]
        return EvidenceReply(rows=rows, restored=dict(restores))

    def suite_results(self, alias: str) -> SuiteResultsReply:
        """T-5 from the latest answer per model and task (non-answers never replace an answer)."""
        latest = ("WITH latest AS (SELECT * FROM suite_answers WHERE kind = 'answered' "
                  "AND ($alias = '' OR alias = $alias) "
                  "QUALIFY row_number() OVER (PARTITION BY alias, task ORDER BY seq DESC) = 1) ")
        wrong_count = "count(*) FILTER (WHERE wrong <> '')"
        cur = self.con.cursor()
        try:
            models = cur.execute(
                latest + "SELECT alias, count(*), coalesce(sum(found) FILTER (WHERE recall), 0), "
                f"coalesce(sum(of) FILTER (WHERE recall), 0), {wrong_count}, max(\"at\") "
                "FROM latest GROUP BY alias ORDER BY alias", {"alias": alias}).fetchall()
            shapes = cur.execute(
                latest + f"SELECT alias, shape, count(*), sum(found), sum(of), {wrong_count} "
                "FROM latest GROUP BY alias, shape ORDER BY alias, shape", {"alias": alias}).fetchall()
            wrong = cur.execute(
                latest + "SELECT alias, task, wrong, invented_clauses, call, \"at\" FROM latest "
                "WHERE wrong <> '' ORDER BY \"at\" DESC, alias, task", {"alias": alias}).fetchall()
        finally:
            cur.close()
        return SuiteResultsReply(
            models=[SuiteModelLine(alias=a, answered=n, found=f, of=o, recall=round(f / o, 3) if o else None,
                                   confidently_wrong=w, last=last) for a, n, f, o, w, last in models],
            shapes=[SuiteShapeLine(alias=a, shape=s, answered=n, found=f, of=o, confidently_wrong=w)
                    for a, s, n, f, o, w in shapes],
            wrong=[SuiteWrongLine(alias=a, task=t, wrong=w, invented=list(i), call=c, at=at)
                   for a, t, w, i, c, at in wrong],
        )

    def judged_claims(self, limit: int) -> list[JudgedClaim]:
        """T-4: each call's latest verdict that names claims, with its panel's logged prompt (route
        conversations log none and are left out), oldest first."""
        cur = self.con.cursor()
        try:
            rows = cur.execute(
                "WITH latest AS (SELECT * FROM verdicts "
                "QUALIFY row_number() OVER (PARTITION BY call ORDER BY seq DESC) = 1) "
                "SELECT v.call, v.alias, p.prompt, v.real_claims, v.false_claims FROM latest v "
                "JOIN seats s ON s.call = v.call JOIN panels p ON p.panel = s.panel "
                "WHERE (len(v.real_claims) > 0 OR len(v.false_claims) > 0) AND coalesce(p.prompt, '') <> '' "
                "ORDER BY v.seq LIMIT ?", [limit]).fetchall()
        finally:
            cur.close()
        return [JudgedClaim(call=c, alias=a, prompt=p, real=list(r), false=list(f)) for c, a, p, r, f in rows]

    def pacing_history(self, connection: str, now: datetime) -> PacingReply:
        """L-2's history of one connection in the shape of the callers' windows: the last 24 hours of
        attempts and tokens per alias (calls that sent nothing left out), exact rows for the calls that
        ended lately and minute buckets (stamped with their end) for the rest, and this month's requests."""
        day_from, month_from = sent_windows(now)
        ended_from = now - timedelta(seconds=PACING_EXACT_S + PACING_CLOCK_MARGIN_S)
        cur = self.con.cursor()
        try:
            rows = cur.execute(
                "SELECT CASE WHEN exact THEN epoch(t) ELSE ceil(epoch(t) / $bucket) * $bucket END, alias, "
                "sum(attempts)::BIGINT, sum(tokens_in + tokens_out)::BIGINT, "
                "CASE WHEN exact THEN call ELSE '' END "
                'FROM (SELECT *, "at" >= $ended AS exact FROM usage '
                "      WHERE connection = $connection AND t > $day AND attempts > 0) "
                "GROUP BY ALL ORDER BY 1, 2, 5",
                {"bucket": PACING_BUCKET_S, "ended": ended_from, "connection": connection, "day": day_from},
            ).fetchall()
            month = cur.execute(
                "SELECT coalesce(sum(attempts), 0)::BIGINT FROM usage WHERE connection = ? AND t >= ?",
                [connection, month_from],
            ).fetchone()
        finally:
            cur.close()
        return PacingReply(
            at=now.timestamp(), rows=[(float(t), a, int(n), int(k), c) for t, a, n, k, c in rows],
            month=month_from.strftime("%Y-%m"), month_requests=int(month[0]) if month else 0,
        )

    def sql(self, query: str, max_rows: int) -> SqlReply:
        cur = self.con.cursor()
        try:
            return analytics.run(cur, query, max_rows)
        finally:
            cur.close()

    def report(self, req: ReportRequest) -> ReportReply:
        """`bench report` over [since, until): both queries in one snapshot, so they agree."""
        cur = self.con.cursor()
        try:
            cur.execute("BEGIN TRANSACTION READ ONLY")
            lines = cur.execute(report.LINES_SQL, report.params(req)).fetchall()
            tokens = cur.execute(report.TOKENS_SQL, report.params(req)).fetchall()
            cur.execute("ROLLBACK")
        finally:
            cur.close()
        return report.reply(req, lines, tokens)

    def export(self, req: ExportRequest, root: Path, name: str, at: datetime) -> ExportReply:
        """Each table's rows after the asker's mark as Parquet in `root/name`, all in one snapshot."""
        folder = root / name
        folder.mkdir(parents=True)
        marks, rows = {}, {}
        cur = self.con.cursor()
        try:
            cur.execute("BEGIN TRANSACTION READ ONLY")
            for table in export.TABLES:
                found = cur.execute(f"SELECT coalesce(max(seq), 0) FROM {table.name}").fetchone()
                upto, after = int(found[0]) if found else 0, req.after.get(table.name, 0)
                marks[table.name] = max(upto, after)
                if upto <= after:
                    continue
                counted = cur.execute(export.count_sql(table, after, upto, req.since)).fetchone()
                if counted and counted[0]:
                    cur.execute(export.copy_sql(table, folder, name, after, upto, req.since))
                    rows[table.name] = int(counted[0])
            cur.execute("ROLLBACK")
        finally:
            cur.close()
        files = [ExportedFile(path=f.relative_to(folder).as_posix(), bytes=f.stat().st_size)
                 for f in sorted(folder.rglob("*.parquet"))]
        return ExportReply(export=name, at=at, since=req.since, marks=marks, rows=rows, files=files)

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

    def memory(self) -> dict[str, int]:
        """DuckDB's own account of the bytes it holds, by what holds them (table blocks, key indexes, ...).
        Read whole, so no open result keeps blocks pinned past the call."""
        cur = self.con.cursor()
        try:
            rows = cur.execute("SELECT tag, memory_usage_bytes FROM duckdb_memory() "
                               "WHERE memory_usage_bytes > 0 ORDER BY memory_usage_bytes DESC").fetchall()
        finally:
            cur.close()
        return {str(tag).lower(): int(n) for tag, n in rows}

"""The job records in the `bench_jobs` bucket, read and written with compare-and-set (`lease_rules` decides).

`Records` is the three calls of a KV bucket this needs; nats-py's bucket is wrapped by `BucketRecords`, and
unit tests use an in-memory one, so the lease logic is tested without a server.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from services.prober.lease_rules import JobRecord, Verdict, claimed, decide
from services.prober.schedule import Due
from shared import subjects
from shared.kv_mirror import KvMirror


class Records(Protocol):
    async def get(self, key: str) -> tuple[bytes, int] | None: ...

    async def put(self, key: str, value: bytes, last: int | None) -> int | None:
        """Write if the key's revision is still `last` (None: the key must not exist); the new revision,
        or None when another writer came first."""
        ...


class BucketRecords:
    """A KV bucket as `Records` (`bench_jobs` here). The bucket is looked up once: binding it asks the
    server for the stream's info, which is no part of a read or a write."""

    def __init__(self, js: JetStreamContext, bucket: str = subjects.JOBS_BUCKET) -> None:
        self.js, self.bucket = js, bucket
        self._kv: KeyValue | None = None

    async def _bucket(self) -> KeyValue:
        if self._kv is None:
            self._kv = await self.js.key_value(self.bucket)
        return self._kv

    async def get(self, key: str) -> tuple[bytes, int] | None:
        kv = await self._bucket()
        try:
            entry = await kv.get(key)
        except KeyNotFoundError:
            return None
        return (entry.value or b""), int(entry.revision or 0)

    async def put(self, key: str, value: bytes, last: int | None) -> int | None:
        kv = await self._bucket()
        try:
            if last is None:
                return int(await kv.create(key, value))
            return int(await kv.update(key, value, last=last))
        except KeyWrongLastSequenceError:
            return None
        except Exception as exc:  # create on an existing key says so in its own words
            if "wrong last sequence" in str(exc).lower():
                return None
            raise


class MirrorRecords:
    """A KV bucket as `Records`, read from this process's copy of it (`KvMirror`): the onboarding runner
    looks at its queue every second, and a look costs no round trip (it cost two JetStream API requests, and
    the server's advisory for each). Writes are compare-and-set on the server, as ever."""

    def __init__(self, mirror: KvMirror) -> None:
        self.mirror = mirror

    @classmethod
    async def open(cls, nc: NATS, bucket: str) -> MirrorRecords:
        kv = await nc.jetstream().key_value(bucket)
        return cls(await KvMirror(kv, lambda: int(nc.stats["reconnects"])).start())

    async def close(self) -> None:
        await self.mirror.stop()

    async def get(self, key: str) -> tuple[bytes, int] | None:
        copy = await self.mirror.read(key)
        return None if copy.value is None else (copy.value, copy.revision)

    async def put(self, key: str, value: bytes, last: int | None) -> int | None:
        if not await self.mirror.write(key, value, last or 0):
            return None
        return self.mirror.copies[key].revision


@dataclass
class Claim:
    due: Due
    record: JobRecord
    revision: int
    took_over: bool = False


def record_key(job: str) -> str:
    return f"job.{job}"


class JobLease:
    def __init__(self, records: Records, instance: str, lease_s: float) -> None:
        self.records, self.instance, self.lease_s = records, instance, lease_s

    async def record(self, job: str) -> JobRecord | None:
        found = await self.records.get(record_key(job))
        return JobRecord.decode(found[0]) if found else None

    async def claim(self, due: Due, now: datetime) -> Claim | str:
        """The claim on `due`, or why this replica leaves it alone."""
        key = record_key(due.job)
        found = await self.records.get(key)
        record = JobRecord.decode(found[0]) if found else None
        decision = decide(record, due.at, now, self.instance)
        if decision.verdict is Verdict.SKIP:
            return decision.why
        mine = claimed(due.at, self.instance, now, self.lease_s)
        last = found[1] if found else None
        revision = await self.records.put(key, mine.encode(), last)
        if revision is None:
            return "another replica claimed it first"
        return Claim(due, mine, revision, took_over=decision.verdict is Verdict.TAKE_OVER)

    async def renew(self, claim: Claim, now: datetime) -> bool:
        """Extend the claim; False when it is no longer ours (it lapsed and another replica took it)."""
        return await self._write(claim, JobRecord(claim.record.due, self.instance,
                                                  now + timedelta(seconds=self.lease_s)))

    async def finish(self, claim: Claim, now: datetime) -> bool:
        return await self._write(claim, JobRecord(claim.record.due, self.instance, now, done=True))

    async def _write(self, claim: Claim, record: JobRecord) -> bool:
        revision = await self.records.put(record_key(claim.due.job), record.encode(), claim.revision)
        if revision is None:
            return False
        claim.record, claim.revision = record, revision
        return True

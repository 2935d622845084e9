"""NATS helpers: connect with reconnect, idempotent provisioning, event publishing, projections.

A projection is an ordered consumer folding events into memory; `wait_for(seq)` gives read-your-writes:
a writer that published at sequence N waits until its own projection has folded N before answering.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import nats
import nats.errors as nats_errors
import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import BadRequestError, NotFoundError

from shared import bus_access, subjects
from shared.bus_credentials import BusLogin, CredentialsError
from shared.events import Event, EventBase, decode_event, encode_event

log = structlog.get_logger("bus")

EVENT_DUPLICATE_WINDOW_S = 120.0
IDS_TTL_S = 600.0
KEY_RATES_TTL_S = 3600.0
CONVERSATIONS_TTL_S = 3600.0
# A session reminded of a seat is not reminded again for a week (sessions are resumed days later).
REMINDERS_TTL_S = 7 * 24 * 3600.0
# Bookkeeping nobody waits for (a good route call's usage line, a route turn's record, a panel's log line,
# the seater's log line of a plan) goes out this long after the answer. In the milliseconds after an
# answer's end its client reads the last bytes and an agent sends its next turn, and the records'
# publishing, storing and folding (several processes at once) took the CPU from both: on a 2-core machine,
# about 0.4 ms of a route turn. A failure's news and the conversation record are not held (see the route
# relay and the route turn).
RECORDS_AFTER_S = 0.01


class DeniedSubjects:
    """Logs each subject the server refused this process once (a missing grant, or a hostile message)."""

    PATTERN = re.compile(r'permissions violation for (publish|subscription) (?:to|on) "?([^"\s]+)"?', re.I)

    def __init__(self, role: str) -> None:
        self.role = role
        self.seen: set[tuple[str, str]] = set()

    def note(self, error: str) -> bool:
        """True when `error` is a permissions violation (logged the first time its subject is seen)."""
        found = self.PATTERN.search(error)
        if found is None:
            return False
        denied = (found.group(1).lower(), found.group(2))
        if denied not in self.seen:
            self.seen.add(denied)
            log.error("nats_permission_denied", role=self.role, action=denied[0], subject=denied[1])
        return True


def tls_context(ca: Path | None) -> ssl.SSLContext | None:
    """Verify the server against the given CA (Kubernetes mounts it from a Secret)."""
    return None if ca is None else ssl.create_default_context(cafile=str(ca))


async def connect(url: str, name: str, login: BusLogin) -> NATS:
    """Log in as `login`'s role and keep reconnecting forever: a NATS restart must not take a service down.

    Credentials the server refuses, or a server certificate the CA does not vouch for, end the first
    connect at once with `CredentialsError` (the client would retry them forever); once connected, such a
    failure on reconnect is logged and retried (a rotation may be under way)."""
    denied = DeniedSubjects(login.role)
    fatal: list[str] = []
    refused = asyncio.Event()

    async def on_error(exc: Exception) -> None:
        why = login_failure(exc, url, login)
        if why is not None and not refused.is_set():
            fatal.append(why)
            refused.set()
        if not denied.note(str(exc)):
            log.warning("nats_error", error=str(exc))

    def closed_by_us() -> bool:
        done = connecting.done() and not connecting.cancelled() and connecting.exception() is None
        return done and connecting.result().is_closed

    async def on_disconnect() -> None:
        if not closed_by_us():  # a lost server is worth a warning; our own close is not
            log.warning("nats_disconnected")

    async def on_reconnect() -> None:
        log.info("nats_reconnected")

    tls = tls_context(login.tls_ca)
    connecting = asyncio.ensure_future(nats.connect(
        url,
        name=name,
        nkeys_seed_str=login.seed.decode(),
        inbox_prefix=bus_access.inbox_prefix(login.role),
        tls=tls,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.25,
        connect_timeout=5,
        allow_reconnect=True,
        error_cb=on_error,
        disconnected_cb=on_disconnect,
        reconnected_cb=on_reconnect,
        pending_size=64 * 1024 * 1024,
    ))
    watching = asyncio.ensure_future(refused.wait())
    await asyncio.wait((connecting, watching), return_when=asyncio.FIRST_COMPLETED)
    watching.cancel()
    if refused.is_set() and not connecting.done():
        connecting.cancel()
        with contextlib.suppress(BaseException):
            await connecting
    if refused.is_set() and (connecting.cancelled() or connecting.exception() is not None):
        raise CredentialsError(fatal[0])
    nc: NATS = connecting.result()
    return nc


def login_failure(exc: Exception, url: str, login: BusLogin) -> str | None:
    """What no retry can fix, in one line; None for what a retry may (a server restarting)."""
    if isinstance(exc, nats_errors.AuthorizationError) or "authorization violation" in str(exc).lower():
        return (f"NATS at {url} refused the {login.role} credentials (authorization violation): the seed "
                f"does not match the server's authorization")
    if isinstance(exc, ssl.SSLError):
        ca = login.tls_ca or "not set: the system's CAs"
        why = getattr(exc, "verify_message", None) or exc.reason or str(exc)
        return f"TLS to NATS at {url} failed ({why}); the CA is read from BENCH_NATS_TLS_CA ({ca})"
    return None


async def _ensure_stream(js: JetStreamContext, config: js_api.StreamConfig, owner: bool) -> str | None:
    """Create the stream if it is missing. One that exists keeps its replicas whatever this process was
    started with: a count that differs is reported (and makes readiness false), never applied silently;
    the owner (the ledger) brings the rest of its settings to ours. Returns the mismatch, if any."""
    name = str(config.name)
    try:
        found = await js.stream_info(name)
    except NotFoundError:
        with contextlib.suppress(BadRequestError):  # another process created it a moment ago
            await js.add_stream(config)
        return None
    have, want = found.config.num_replicas or 1, config.num_replicas or 1
    if owner:
        await js.update_stream(replace(config, num_replicas=have))
    return None if have == want else replicas_mismatch(f"stream {name}", have, want)


def replicas_mismatch(what: str, have: int, want: int) -> str:
    return (f"{what} has {have} replica(s) but BENCH_REPLICAS is {want}; nothing was changed (change the "
            "stream with `nats stream edit`, or set BENCH_REPLICAS to match)")


async def provision(js: JetStreamContext, replicas: int = 1, owner: bool = True) -> list[str]:
    """Create every stream and bucket that is missing; the owner (the ledger) also brings each stream's
    settings to ours, replicas aside. Safe to run from every process at start. Returns the mismatches found
    (each names what differs): reported by readiness, never fixed behind the operator's back."""
    problems = [
        await _ensure_stream(js, events_stream(replicas), owner),
        await _ensure_stream(
            js,
            js_api.StreamConfig(
                name=subjects.CALLS_STREAM,
                subjects=[subjects.CALLS_ALL],
                retention=js_api.RetentionPolicy.WORK_QUEUE,
                storage=js_api.StorageType.FILE,
                duplicate_window=EVENT_DUPLICATE_WINDOW_S,
                num_replicas=replicas,
                description="Provider calls waiting for a caller",
            ),
            owner,
        ),
    ]
    buckets = [
        # Route conversation ids, reserved by an atomic create; a clash draws again (C-12).
        js_api.KeyValueConfig(bucket=subjects.IDS_BUCKET, ttl=IDS_TTL_S, history=1, replicas=replicas),
        # One compare-and-set document of windows and quotas per connection (L-1..L-4).
        js_api.KeyValueConfig(bucket=subjects.LIMITS_BUCKET, history=1, replicas=replicas),
        # RM-4: every route turn rewrites its conversation, so an entry idle for an hour expires.
        js_api.KeyValueConfig(bucket=subjects.CONVERSATIONS_BUCKET, ttl=CONVERSATIONS_TTL_S, history=1,
                              replicas=replicas),
        # SEC-4: each gateway key's last minute of requests, shared by the replicas; an idle key's entry
        # (or a revoked one's) ages out instead of staying forever.
        js_api.KeyValueConfig(bucket=subjects.KEY_RATES_BUCKET, ttl=KEY_RATES_TTL_S, history=1,
                              replicas=replicas),
        # MCP-3: one entry per (agent session, seat) already reminded of, made by an atomic create.
        js_api.KeyValueConfig(bucket=subjects.REMINDERS_BUCKET, ttl=REMINDERS_TTL_S, history=1,
                              replicas=replicas),
        # HL-7: one record per scheduled job, claimed with compare-and-set by one prober replica.
        js_api.KeyValueConfig(bucket=subjects.JOBS_BUCKET, history=1, replicas=replicas),
        # CAT-2: the feeds' cached entries (compressed) and Discover's first-seen dates, one key each.
        js_api.KeyValueConfig(bucket=subjects.CATALOG_BUCKET, history=1, replicas=replicas),
        # O-3: the onboarding queue, one document written with compare-and-set by every prober replica.
        js_api.KeyValueConfig(bucket=subjects.ONBOARD_BUCKET, history=1, replicas=replicas),
    ]
    for bucket in buckets:
        problems.append(await ensure_bucket(js, bucket))
    return [p for p in problems if p]


def events_stream(replicas: int) -> js_api.StreamConfig:
    """`BENCH_EVENTS`: the source of truth, so nothing ages out and nothing is dropped to make room: when
    the JetStream store is full, new events are refused (`discard: new`) rather than history lost. The
    ledger's `bench_jetstream_store_fill_ratio` gauge warns long before (alert at 0.8)."""
    return js_api.StreamConfig(
        name=subjects.EVENTS_STREAM,
        subjects=[subjects.EVENTS_ALL],
        retention=js_api.RetentionPolicy.LIMITS,
        discard=js_api.DiscardPolicy.NEW,
        storage=js_api.StorageType.FILE,
        duplicate_window=EVENT_DUPLICATE_WINDOW_S,
        num_replicas=replicas,
        description="Every Benchwarmers event: the source of truth",
    )


async def ensure_bucket(js: JetStreamContext, config: js_api.KeyValueConfig) -> str | None:
    """Create the bucket unless it exists (every process provisions at start; the first one wins); one that
    exists with another replica count is reported, not changed."""
    try:
        await js.key_value(config.bucket)
    except (NotFoundError, Exception):
        with contextlib.suppress(BadRequestError):
            await js.create_key_value(config)
        return None
    try:
        found = await js.stream_info(f"KV_{config.bucket}")
    except Exception:  # a role without stream info on this bucket cannot tell; the ledger's can
        return None
    have, want = found.config.num_replicas or 1, config.replicas or 1
    return None if have == want else replicas_mismatch(f"bucket {config.bucket}", have, want)


async def publish_event(
    js: JetStreamContext, event: EventBase, expected_last_subject_seq: int | None = None, timeout: float = 5.0
) -> int:
    """Publish with `Nats-Msg-Id` = event id; returns its stream sequence (the first one's if a repeat)."""
    headers = {"Nats-Msg-Id": event.id}
    if expected_last_subject_seq is not None:
        headers["Nats-Expected-Last-Subject-Sequence"] = str(expected_last_subject_seq)
    ack = await js.publish(event.subject(), encode_event(event), headers=headers, timeout=timeout)
    return int(ack.seq)


async def reserve_id(js: JetStreamContext, draw: Callable[[], str], tries: int = 50) -> str:
    """Draw ids until one is reserved in the `bench_ids` bucket (create is atomic: one winner per key)."""
    kv = await js.key_value(subjects.IDS_BUCKET)
    for _ in range(tries):
        candidate = draw()
        try:
            await kv.create(candidate, b"1")
            return candidate
        except Exception as exc:  # KeyWrongLastSequenceError: taken
            if "wrong last sequence" not in str(exc).lower() and "exists" not in str(exc).lower():
                raise
    raise RuntimeError("could not reserve a unique id")


Fold = Callable[[Event, int], Any]


def caught_up(projection: Projection) -> str | None:
    """For readiness: a projection still folding the events present at its start is not ready."""
    return None if projection.caught_up.is_set() else f"{projection.name} is still folding the stream"


class Projection:
    """An in-memory fold of the events on `subject`, from the first one, kept live.

    `caught_up` is set once every event present at start has been folded. `wait_for(seq)` returns once
    an event at stream sequence `seq` or later has been folded (read-your-writes after a publish).
    """

    def __init__(
        self, js: JetStreamContext, subject: str | tuple[str, ...], fold: Fold, name: str = "projection"
    ) -> None:
        self.js = js
        # Several subjects make one consumer with `filter_subjects`: what the fold ignores is never sent.
        self.subjects = (subject,) if isinstance(subject, str) else subject
        self.fold = fold
        self.name = name
        self.seq = 0
        self.caught_up = asyncio.Event()
        self._changed = asyncio.Condition()
        self._sub: Any = None
        self._target = 0

    async def start(self, timeout: float = 60.0) -> None:
        info = await self.js.stream_info(subjects.EVENTS_STREAM)
        self._target = info.state.last_seq
        several = len(self.subjects) > 1
        config = js_api.ConsumerConfig(filter_subjects=list(self.subjects)) if several else None
        self._sub = await self.js.subscribe(
            self.subjects[0], ordered_consumer=True, cb=self._on_msg, stream=subjects.EVENTS_STREAM,
            idle_heartbeat=2.0, config=config,
        )
        if self._target == 0:
            self.caught_up.set()
        else:
            await self._wait_target(timeout)

    async def _wait_target(self, timeout: float) -> None:
        """Caught up once nothing is pending (the filter may never match the stream's last sequence)."""
        end = asyncio.get_running_loop().time() + timeout
        while not self.caught_up.is_set():
            if self.seq >= self._target:
                self.caught_up.set()
                break
            with contextlib.suppress(Exception):
                ci = await self._sub.consumer_info()
                # Nothing delivered at all (consumer_seq 0) also counts: with a filter that matches no event
                # the server may still report the stream sequence it scanned past.
                nothing = ci.delivered.consumer_seq == 0
                if ci.num_pending == 0 and self._sub.pending_msgs == 0 and (
                    nothing or ci.delivered.stream_seq <= self.seq
                ):
                    self.caught_up.set()
                    break
            if asyncio.get_running_loop().time() > end:
                raise TimeoutError(f"{self.name}: not caught up within {timeout}s")
            await asyncio.sleep(0.02)

    async def _on_msg(self, msg: Msg) -> None:
        seq = msg.metadata.sequence.stream
        try:
            event = decode_event(msg.data)
        except Exception as exc:  # an event of a newer schema: skip it, do not stop the fold
            log.warning("event_undecodable", projection=self.name, seq=seq, error=str(exc)[:200])
        else:
            result = self.fold(event, seq)
            if asyncio.iscoroutine(result):
                await result
        self.seq = max(self.seq, seq)
        if self.seq >= self._target:
            self.caught_up.set()
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, seq: int, timeout: float = 10.0) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: self.seq >= seq), timeout)

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

"""The window arithmetic of SPEC L-2/L-2a: what one connection has sent, which limits that meets, and
whether a call goes now, waits, or is refused. Pure: the document is what the `bench_limits` bucket holds
for one connection, the time is an input.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Literal

from services.caller.quota_headers import Quota
from shared.commands import PACING_BUCKET_S, PACING_EXACT_S

WINDOW_S = {"rpm": 60.0, "tpm": 60.0, "rpd": 86400.0, "tpd": 86400.0}
TOKEN_AXES = ("tpm", "tpd")
AXIS_WORDS = {"rpm": "requests per minute", "rpd": "requests per day", "tpm": "tokens per minute",
              "tpd": "tokens per day", "rpmo": "requests per month"}
QUOTA_WINDOW_WORDS = {"minute": "per minute", "hour": "per hour", "day": "per day",
                      "retry": "before its reset"}
DAY_S = 86400.0
EXACT_S = PACING_EXACT_S  # younger entries stay exact (the minute windows); older ones share buckets
BUCKET_S = PACING_BUCKET_S
MARGIN_S = 2.0  # L-2a: wait only when the window frees before the deadline minus this
RECHECK_S = 5.0  # L-2a: a waiting call looks again at least this often
RETRY_SOON_S = 1.0  # a window held only by calls still in flight: look again shortly


@dataclass
class Entry:
    """Requests sent at `t` (one per attempt, or a minute bucket of them) and their tokens.

    While `until` is ahead the attempt is in flight: it counts in every window whatever its age, and its
    tokens are an estimate until settled. A crashed caller's entry stops being in flight at `until`. `call`
    names the call while the entry is exact, so the ledger's record of that call is not counted twice.
    """

    t: float
    alias: str
    requests: int
    tokens: int
    until: float = 0.0
    slot: str = ""
    call: str = ""

    def counts(self, now: float, window: float) -> bool:
        return self.t > now - window or self.until > now


@dataclass
class Windows:
    """One connection's document in the `bench_limits` bucket."""

    entries: list[Entry] = field(default_factory=list)
    months: dict[str, int] = field(default_factory=dict)  # "YYYY-MM" → requests sent (rpmo)
    quotas: dict[str, Quota] = field(default_factory=dict)  # "<alias>|<metric>|<window>" → record
    seeded: set[str] = field(default_factory=set)  # scopes whose ledger history is in (`seeding`)

    def to_json(self) -> bytes:
        return json.dumps({
            "e": [[e.t, e.alias, e.requests, e.tokens, e.until, e.slot, e.call] for e in self.entries],
            "m": self.months,
            "q": {k: q.to_list() for k, q in self.quotas.items()},
            "s": sorted(self.seeded),
        }, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes | None) -> Windows:
        if not raw:
            return cls()
        data: dict[str, Any] = json.loads(raw)
        return cls(entries=[Entry(*e) for e in data.get("e", [])], months=dict(data.get("m", {})),
                   quotas={k: Quota.from_list(v) for k, v in data.get("q", {}).items()},
                   seeded=set(data.get("s", [])))

    def quotas_of(self, alias: str, now: float) -> list[tuple[str, Quota]]:
        return [(k, q) for k, q in self.quotas.items() if k.split("|", 1)[0] == alias and q.reset_at > now]


@dataclass(frozen=True)
class Limit:
    scope: Literal["connection", "model"]
    name: str  # the connection or the alias
    axis: str  # rpm, rpd, tpm, tpd, rpmo
    n: int
    source: str  # in the refusal text: "your limit", "learned 2026-12-02"


@dataclass(frozen=True)
class Block:
    """A window without room, in the words of L-2a's refusal, and when it frees."""

    scope: str
    n: int
    axis_words: str
    source: str
    used: int
    free_at: float


@dataclass(frozen=True)
class Decision:
    kind: Literal["admit", "wait", "refuse"]
    at: float = 0.0  # wait: when to look again
    block: Block | None = None


def month_key(now: float) -> str:
    return _month_of_day(int(now // 86_400))


@lru_cache(maxsize=4)
def _month_of_day(day: int) -> str:
    """Asked on every admission: formatting a date each time showed in the caller's profile."""
    return datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m")


def next_month_start(now: float) -> float:
    day = datetime.fromtimestamp(now, UTC)
    year, month = (day.year + 1, 1) if day.month == 12 else (day.year, day.month + 1)
    return datetime(year, month, 1, tzinfo=UTC).timestamp()


def tidy(doc: Windows, now: float) -> None:
    """Forget what no window can see, end crashed callers' flights, fold old entries into minute buckets."""
    buckets: dict[tuple[float, str], list[int]] = defaultdict(lambda: [0, 0])
    kept = []
    for e in doc.entries:
        if e.until and e.until <= now:
            e.until, e.slot = 0.0, ""
        if e.t <= now - DAY_S and not e.until:
            continue
        if e.t < now - EXACT_S and not e.until:
            bucket = buckets[(math.ceil(e.t / BUCKET_S) * BUCKET_S, e.alias)]
            bucket[0] += e.requests
            bucket[1] += e.tokens
        else:
            kept.append(e)
    doc.entries = [Entry(t, alias, r, k) for (t, alias), (r, k) in sorted(buckets.items())] + kept
    current = month_key(now)
    doc.months = {current: doc.months[current]} if current in doc.months else {}
    doc.quotas = {k: q for k, q in doc.quotas.items() if q.reset_at > now}


def _scope(limit: Limit) -> str:
    return f"{limit.scope} {limit.name}"


def _freed_at(counted: list[Entry], excess: int, amount: str, window: float, now: float) -> float:
    """When enough of the oldest counted entries have aged out to free `excess` requests or tokens."""
    freed = 0
    for e in sorted(counted, key=lambda e: e.t):
        freed += getattr(e, amount)
        if freed >= excess:
            return max(e.t + window, now + RETRY_SOON_S)
    return now + RETRY_SOON_S  # only in-flight calls hold it: they settle soon


def window_block(limit: Limit, doc: Windows, tokens: int, now: float) -> Block | None:
    window = WINDOW_S[limit.axis]
    counted = [e for e in doc.entries if e.counts(now, window)
               and (limit.scope == "connection" or e.alias == limit.name)]
    amount = "tokens" if limit.axis in TOKEN_AXES else "requests"
    used = sum(getattr(e, amount) for e in counted)
    need = tokens if amount == "tokens" else 1
    if need > limit.n:  # bigger than the whole window: waits for an empty one
        if used == 0:
            return None
        excess = used
    elif used + need <= limit.n:
        return None
    else:
        excess = used + need - limit.n
    free_at = _freed_at(counted, excess, amount, window, now)
    return Block(_scope(limit), limit.n, AXIS_WORDS[limit.axis], limit.source, used, free_at)


def month_block(limit: Limit, doc: Windows, now: float) -> Block | None:
    used = doc.months.get(month_key(now), 0)
    if used + 1 <= limit.n:
        return None
    return Block(_scope(limit), limit.n, AXIS_WORDS["rpmo"], limit.source, used, next_month_start(now))


def quota_block(alias: str, quota: Quota, doc: Windows, now: float) -> Block | None:
    """L-4: enforced until its reset, as `remaining` minus what was sent since it was observed."""
    since = [e for e in doc.entries if e.alias == alias and e.t >= quota.observed_at]
    sent = sum(e.requests if quota.metric == "requests" else e.tokens for e in since)
    left = quota.remaining - sent
    if left > 0:
        return None
    n = quota.limit if quota.limit is not None else quota.remaining
    used = quota.limit - left if quota.limit is not None else sent
    words = f"{quota.metric.replace('_', ' ')} {QUOTA_WINDOW_WORDS.get(quota.window, quota.window)}"
    return Block(f"model {alias}", n, words, f"provider quota, {quota.source}", used, quota.reset_at)


def limit_block(limit: Limit, doc: Windows, tokens: int, now: float) -> Block | None:
    return month_block(limit, doc, now) if limit.axis == "rpmo" else window_block(limit, doc, tokens, now)


def decide(
    doc: Windows, limits: list[Limit], alias: str, tokens: int, now: float, deadline: float
) -> Decision:
    """Admit when every window has room; else wait if the last-freeing one frees before the deadline
    (minus the margin), else refuse."""
    found = [limit_block(lim, doc, tokens, now) for lim in limits]
    found += [quota_block(alias, q, doc, now) for _, q in doc.quotas_of(alias, now)]
    blocks = [b for b in found if b is not None]
    if not blocks:
        return Decision("admit")
    last = max(blocks, key=lambda b: b.free_at)
    if last.free_at < deadline - MARGIN_S:
        return Decision("wait", at=min(last.free_at, now + RECHECK_S), block=last)
    return Decision("refuse", at=last.free_at, block=last)


def take(doc: Windows, alias: str, tokens: int, now: float, until: float, slot: str, call: str = "") -> None:
    doc.entries.append(Entry(now, alias, 1, tokens, until, slot, call))
    key = month_key(now)
    doc.months[key] = doc.months.get(key, 0) + 1


def settle(doc: Windows, slot: str, tokens: int, sent_at: float | None = None) -> None:
    """The attempt is over: its tokens are now the provider's count (or our estimate), and its windows
    count from `sent_at`, when its last byte left, if that is later than its admission. A provider counts
    from the request's arrival; counting from the admission, a call whose sending took longer (a new
    connection) would age out of our minute before it left the provider's. Only ever later: an attempt
    never frees room sooner than it was admitted."""
    for e in doc.entries:
        if e.slot == slot:
            e.tokens, e.until, e.slot = tokens, 0.0, ""
            if sent_at is not None and sent_at > e.t:
                e.t = sent_at
            return


def remember(doc: Windows, alias: str, quotas: list[Quota]) -> None:
    """Newer observations replace older ones of the same metric and window."""
    for q in quotas:
        key = f"{alias}|{q.metric}|{q.window}"
        known = doc.quotas.get(key)
        if known is None or q.observed_at >= known.observed_at:
            doc.quotas[key] = q


def wait_words(seconds: float) -> str:
    """L-2a: seconds, minutes from 120 s, hours from 7200 s (rounded up)."""
    if seconds >= 7200:
        return f"{math.ceil(seconds / 3600)}h"
    if seconds >= 120:
        return f"{math.ceil(seconds / 60)}m"
    return f"{max(1, math.ceil(seconds))}s"


def refusal_text(block: Block, now: float) -> str:
    return (f"Error: client failed: rate limit (not sent; paced by the bench): {block.scope} allows "
            f"{block.n} {block.axis_words} ({block.source}) and {block.used} were used; "
            f"try again in {wait_words(block.free_at - now)}")

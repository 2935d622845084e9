"""The quota view (L-7) from the ledger's facts: live quota records, what was sent, who rests, which limits
are known. Pure: the store hands over rows, these functions decide what the page shows as of `now`.

Nothing here repeats a provider's own message: cooldowns say only whether the wait was stated or the
default, learned limits say when and on which call they were learned.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.commands import (
    KnownLimits,
    LearnedLimit,
    QuotaLine,
    QuotaReply,
    RestingLine,
    SentLine,
    UserLimit,
)

LIMIT_AXES = ("rpm", "rpd", "tpm", "tpd", "rpmo")
# L-4: a record is dropped once its reset is more than a day old, or, without a reset, after a week.
EXPIRED_AFTER_RESET = timedelta(days=1)
EXPIRED_WITHOUT_RESET = timedelta(days=7)
DAY = timedelta(hours=24)


@dataclass(frozen=True)
class QuotaFact:
    """A stored quota record and what the bench sent on its connection and model since it was reported."""

    connection: str
    alias: str
    metric: str  # requests | tokens | input_tokens | output_tokens
    period: str
    observed_at: datetime
    allowed: int | None
    remaining: int
    reset_at: datetime | None
    source: str
    requests_since: int = 0
    tokens_in_since: int = 0
    tokens_out_since: int = 0


@dataclass(frozen=True)
class CooldownFact:
    alias: str
    connection: str
    until: datetime
    why: str


@dataclass(frozen=True)
class LimitsChange:
    """A stored `limits_saved` change: its scope, name and axes are in `change` (the event's own fields)."""

    seq: int
    at: datetime
    by: str
    change: Mapping[str, Any]


@dataclass(frozen=True)
class LearnedFact:
    alias: str
    connection: str
    axis: str
    allowed: int
    at: datetime
    call: str


@dataclass(frozen=True)
class QuotaFacts:
    quotas: list[QuotaFact]
    sent: list[SentLine]
    cooldowns: list[CooldownFact]
    limits: list[LimitsChange]
    learned: list[LearnedFact]


def sent_windows(now: datetime) -> tuple[datetime, datetime]:
    """L-2's windows for L-7's counts: the last 24 hours, and the calendar month (UTC) `now` is in."""
    utc = now.astimezone(UTC)
    return utc - DAY, utc.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def expired(fact: QuotaFact, now: datetime) -> bool:
    if fact.reset_at is not None:
        return fact.reset_at < now - EXPIRED_AFTER_RESET
    return fact.observed_at < now - EXPIRED_WITHOUT_RESET


def used_since(fact: QuotaFact) -> int:
    """What the record's metric counts of the calls sent since it was reported."""
    if fact.metric == "requests":
        return fact.requests_since
    if fact.metric == "input_tokens":
        return fact.tokens_in_since
    if fact.metric == "output_tokens":
        return fact.tokens_out_since
    return fact.tokens_in_since + fact.tokens_out_since


def left(fact: QuotaFact, now: datetime) -> int | None:
    """L-4: until its reset a record allows its `remaining` less what was sent since; after it, the whole
    limit (unknown when the provider named none)."""
    if fact.reset_at is not None and fact.reset_at <= now:
        return fact.allowed
    return max(0, fact.remaining - used_since(fact))


def quota_lines(facts: Iterable[QuotaFact], now: datetime) -> list[QuotaLine]:
    lines = [
        QuotaLine(
            connection=f.connection, alias=f.alias, metric=f.metric, window=f.period, left=left(f, now),
            of=f.allowed, resets=f.reset_at, source=f.source, observed_at=f.observed_at,
            age_s=max(0, int((now - f.observed_at).total_seconds())),
        )
        for f in facts if not expired(f, now)
    ]
    return sorted(lines, key=lambda q: (q.connection, q.alias, q.metric, q.window))


def resting(cooldowns: Iterable[CooldownFact], now: datetime) -> list[RestingLine]:
    """L-3: each model whose latest rest has not ended, with whole minutes left (rounded up)."""
    latest: dict[str, CooldownFact] = {}
    for c in cooldowns:
        known = latest.get(c.alias)
        if known is None or c.until > known.until:
            latest[c.alias] = c
    lines = [
        RestingLine(
            alias=c.alias, connection=c.connection, until=c.until,
            minutes_left=math.ceil((c.until - now).total_seconds() / 60),
            wait="stated" if "stated" in c.why else "default",
        )
        for c in latest.values() if c.until > now
    ]
    return sorted(lines, key=lambda r: (r.until, r.alias))


def user_limits(changes: Iterable[LimitsChange]) -> list[UserLimit]:
    """L-1 (a)/(b): each connection's and model's last `limits_saved` (stream order), if it sets an axis."""
    current: dict[tuple[str, str], UserLimit] = {}
    for c in sorted(changes, key=lambda c: c.seq):
        scope, name = c.change.get("scope"), c.change.get("name")
        if scope not in ("connection", "model") or not isinstance(name, str):
            continue
        axes = {axis: c.change.get(axis) for axis in LIMIT_AXES}
        if any(axes.values()):
            current[(scope, name)] = UserLimit(scope=scope, name=name, at=c.at, by=c.by, **axes)
        else:
            current.pop((scope, name), None)
    return [current[k] for k in sorted(current)]


def learned_limits(facts: Iterable[LearnedFact], user: Iterable[UserLimit]) -> list[LearnedLimit]:
    """L-3: per model and axis the tightest limit stated (the first to state it), and whether it binds:
    a limit the user set for that model and axis wins over a learned one (L-1 c)."""
    tightest: dict[tuple[str, str], LearnedFact] = {}
    for f in facts:
        known = tightest.get((f.alias, f.axis))
        if known is None or f.allowed < known.allowed:
            tightest[(f.alias, f.axis)] = f
    by_model = {u.name: u for u in user if u.scope == "model"}
    lines = []
    for (alias, axis), f in sorted(tightest.items()):
        user_set = getattr(by_model.get(alias), axis, None) if axis in LIMIT_AXES else None
        lines.append(LearnedLimit(
            alias=alias, connection=f.connection, axis=axis, limit=f.allowed,
            date=f.at.astimezone(UTC).date().isoformat(), where=f"call {f.call}" if f.call else "",
            enforced=not user_set,
        ))
    return lines


def quota_reply(facts: QuotaFacts, now: datetime) -> QuotaReply:
    user = user_limits(facts.limits)
    return QuotaReply(
        at=now, quotas=quota_lines(facts.quotas, now), sent=sorted(facts.sent, key=lambda s: s.connection),
        resting=resting(facts.cooldowns, now),
        limits=KnownLimits(user=user, learned=learned_limits(facts.learned, user)),
    )

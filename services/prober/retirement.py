"""HL-5's auto-retire rules over a model's evidence, and C-16's alerts ahead of them. Pure.

Evidence is the model's probe rows and its answered offloads since it was last restored (failures before a
restore are ignored); any answer resets the clock, so only failures after the last answer count. Sign-in
failures, account-wide quotas and the free-tier guard's refusals never count. Then, in order:
- immediate: the latest probe (at most a day old) failed `structural`, `paywalled` or `entitlement` → ONE
  confirming call; retired only if it fails in one of those classes again;
- missing from its endpoint's list for 3 days (no confirmation, no connection guard);
- `other` failures on 3 distinct days;
- backstop: failing for 7 days or more with failures on 3 days, whatever the class.
Rate limits and timeouts alone never retire within 7 days and never raise an alert. The failure-based
rules are held back on a connection where ≥2 models have evidence and all are down: that is the
connection's trouble, not theirs (a `connection:held:<conn>` alert instead). Anything else failing gets a
`retiring` alert: "<alias> retires in N days unless it answers".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from math import ceil

from shared.failures import HARD

DAY = timedelta(days=1)
MISSING_DAYS = 3
OTHER_DAYS = 3
BACKSTOP_SPAN = timedelta(days=7)
# Failures that say nothing about the model: account-wide quotas, and the free-tier guard (U-5) holding a
# call back (our own refusal: the user may allow paid calls at any time).
NOT_THE_MODEL = ("free-models-per-day", "usage_limit_exceeded", "not sent: the free-tier guard holds")
SOFT = ("capacity", "timeout")  # never retire alone within 7 days, never an alert


@dataclass(frozen=True)
class Evidence:
    at: datetime
    answered: bool
    failure: str | None = None
    detail: str = ""
    probe: bool = True  # a probe row; False for an answered offload


@dataclass(frozen=True)
class Model:
    alias: str
    served: str
    connection: str
    evidence: tuple[Evidence, ...] = ()
    restored: datetime | None = None
    missing_since: datetime | None = None  # first time its endpoint's list lacked it (HL-4)


@dataclass(frozen=True)
class Verdict:
    """`retire` now; `confirm` with one call first; `pending` in `days`; `held` by its connection; `well`."""

    alias: str
    action: str
    why: str = ""
    days: int = 0


@dataclass
class Assessment:
    verdicts: list[Verdict] = field(default_factory=list)
    held: dict[str, list[str]] = field(default_factory=dict)  # connection → its aliases, all down


def counted(model: Model) -> list[Evidence]:
    """Evidence that counts: after the restore, without sign-in failures and account-wide quotas."""
    return [e for e in sorted(model.evidence, key=lambda e: e.at)
            if (model.restored is None or e.at > model.restored) and e.failure != "signin"
            and not any(words in e.detail for words in NOT_THE_MODEL)]


def failing(evidence: list[Evidence]) -> list[Evidence]:
    """The failures since the last answer (an answer resets the clock)."""
    last_answer = max((i for i, e in enumerate(evidence) if e.answered), default=-1)
    return [e for e in evidence[last_answer + 1:] if not e.answered]


def days_of(failures: Iterable[Evidence]) -> int:
    return len({e.at.date() for e in failures})


def judge(model: Model, now: datetime) -> Verdict:
    """The model's verdict before the connection guard."""
    if model.missing_since is not None:
        gone_for = now - model.missing_since
        if gone_for >= MISSING_DAYS * DAY:
            return Verdict(model.alias, "retire", f"missing from its endpoint's list since "
                           f"{model.missing_since:%Y-%m-%d}")
    evidence = counted(model)
    fails = failing(evidence)
    probes = [e for e in evidence if e.probe]
    latest = probes[-1] if probes else None
    if latest is not None and not latest.answered and latest.failure in HARD and now - latest.at <= DAY:
        return Verdict(model.alias, "confirm", f"{latest.failure}: {latest.detail[:200]}".rstrip(": "))
    if fails:
        others = [e for e in fails if e.failure == "other"]
        span = now - fails[0].at
        if days_of(others) >= OTHER_DAYS:
            return Verdict(model.alias, "retire", f"other failures on {days_of(others)} days")
        if span >= BACKSTOP_SPAN and days_of(fails) >= OTHER_DAYS:
            return Verdict(model.alias, "retire", f"failing for {span.days} days, on {days_of(fails)} days")
        if all(e.failure in SOFT for e in fails):
            return Verdict(model.alias, "well")
        days = max(1, OTHER_DAYS - days_of(others)) if others else max(1, ceil((BACKSTOP_SPAN - span) / DAY))
        return Verdict(model.alias, "pending", f"failing ({fails[-1].failure})", days)
    if model.missing_since is not None:
        left = ceil((MISSING_DAYS * DAY - (now - model.missing_since)) / DAY)
        return Verdict(model.alias, "pending", "missing from its endpoint's list", max(1, left))
    return Verdict(model.alias, "well")


def down(model: Model) -> bool:
    """Its latest counted evidence is a failure."""
    evidence = counted(model)
    return bool(evidence) and not evidence[-1].answered


def assess(models: Iterable[Model], now: datetime) -> Assessment:
    """Every model's verdict, with the connection guard applied to the failure-based ones."""
    models = list(models)
    by_connection: dict[str, list[Model]] = {}
    for model in models:
        if counted(model):
            by_connection.setdefault(model.connection, []).append(model)
    held = {conn: [m.alias for m in group] for conn, group in by_connection.items()
            if len(group) >= 2 and all(down(m) for m in group)}
    result = Assessment(held=held)
    for model in models:
        verdict = judge(model, now)
        missing_rule = verdict.action == "retire" and verdict.why.startswith("missing")
        failure_based = verdict.action in ("retire", "confirm", "pending") and not missing_rule
        if model.connection in held and failure_based:
            verdict = Verdict(model.alias, "held", f"every model on {model.connection} is down")
        result.verdicts.append(verdict)
    return result


def after_confirming(verdict: Verdict, failure: str | None, detail: str) -> Verdict:
    """The confirming call decides: the same kind of failure retires, anything else leaves it pending a
    day."""
    if failure in HARD:
        return Verdict(verdict.alias, "retire", f"{failure}, confirmed: {detail[:200]}".rstrip(": "))
    return Verdict(verdict.alias, "pending", f"{verdict.why} (the confirming call did not fail the same way)",
                   1)


def pending_message(alias: str, days: int) -> str:
    return f"{alias} retires in {days} day{'s' if days != 1 else ''} unless it answers"


def evidence_by_alias(rows: Iterable[tuple[str, Evidence]]) -> Mapping[str, tuple[Evidence, ...]]:
    grouped: dict[str, list[Evidence]] = {}
    for alias, evidence in rows:
        grouped.setdefault(alias, []).append(evidence)
    return {alias: tuple(found) for alias, found in grouped.items()}

"""Quota records from what a provider says about its limits (SPEC L-4): rate-limit headers, Retry-After on a
429, Gemini's QuotaFailure/RetryInfo and OpenRouter's `error.metadata.headers`. Resets become absolute.

Pure: headers, body text, host and the time in; records out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

from services.caller.rate_limits import duration_s

OPENAI_RE = re.compile(r"^x-ratelimit-(limit|remaining|reset)-(requests|tokens)(?:-(minute|hour|day))?$")
BARE_RE = re.compile(r"^x-ratelimit-(limit|remaining|reset)$")
ANTHROPIC_RE = re.compile(
    r"^anthropic-ratelimit-(requests|tokens|input-tokens|output-tokens)-(limit|remaining|reset)$"
)
DURATION_RE = re.compile(r"^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$")
PER_DAY_RE = re.compile(r"per[- ]?day", re.IGNORECASE)
WINDOW_S = {"minute": 60.0, "hour": 3600.0, "day": 86400.0, "retry": 0.0}
# Host profiles (L-4): the window of a bare `-requests`/`-tokens` header when it names none.
HOST_WINDOWS = {"api.groq.com": {"requests": "day", "tokens": "minute"}}
EPOCH_MS = 1e12
EPOCH_S = 1e9


@dataclass(frozen=True)
class Quota:
    """One quota as last observed. `reset_at`/`observed_at` are epoch seconds (UTC)."""

    metric: str  # requests, tokens, input_tokens, output_tokens
    window: str  # minute, hour, day, retry
    limit: int | None
    remaining: int
    reset_at: float
    observed_at: float
    source: str

    def to_list(self) -> list[Any]:
        return [self.metric, self.window, self.limit, self.remaining, self.reset_at, self.observed_at,
                self.source]

    @classmethod
    def from_list(cls, raw: list[Any]) -> Quota:
        metric, window, limit, remaining, reset_at, observed_at, source = raw
        return cls(metric, window, limit, remaining, reset_at, observed_at, source)


def reset_time(value: str, now: float) -> float | None:
    """A reset as epoch seconds: a duration (`6m0s`, `20ms`), seconds, epoch s or ms, RFC 3339, HTTP date."""
    value = value.strip()
    if DURATION_RE.match(value):
        return now + (duration_s(value) or 0.0)
    try:
        number = float(value)
    except ValueError:
        return _date(value)
    if number > EPOCH_MS:
        return number / 1000
    return number if number > EPOCH_S else now + number


def _date(value: str) -> float | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None


def host_window(host: str, metric: str) -> str:
    for suffix, windows in HOST_WINDOWS.items():
        if host == suffix or host.endswith("." + suffix):
            return windows.get(metric, "minute")
    return "minute"


def _int(value: str | None) -> int | None:
    try:
        return int(float(value)) if value is not None else None
    except ValueError:
        return None


def _record(metric: str, window: str, source: str, fields: dict[str, str], now: float) -> Quota | None:
    remaining = _int(fields.get("remaining"))
    if remaining is None:
        return None
    reset = reset_time(fields["reset"], now) if fields.get("reset") else None
    return Quota(metric, window, _int(fields.get("limit")), remaining,
                 reset if reset is not None else now + WINDOW_S[window], now, source)


def from_headers(headers: Mapping[str, str], host: str, now: float, message: str = "") -> list[Quota]:
    groups: dict[tuple[str, str, str], dict[str, str]] = {}
    for raw_name, value in headers.items():
        name = raw_name.lower()
        if m := OPENAI_RE.match(name):
            part, metric, window = m.group(1), m.group(2), m.group(3) or host_window(host, m.group(2))
            groups.setdefault((metric, window, "x-ratelimit"), {})[part] = value
        elif m := BARE_RE.match(name):
            window = "day" if PER_DAY_RE.search(message) else "minute"
            groups.setdefault(("requests", window, "x-ratelimit"), {})[m.group(1)] = value
        elif m := ANTHROPIC_RE.match(name):
            metric = m.group(1).replace("-", "_")
            groups.setdefault((metric, "minute", "anthropic-ratelimit"), {})[m.group(2)] = value
    found = [_record(*group, fields, now) for group, fields in groups.items()]
    return [q for q in found if q is not None]


def from_retry_after(value: str | None, now: float) -> list[Quota]:
    """A 429's Retry-After: nothing more may be sent before it passes."""
    reset = reset_time(value, now) if value else None
    return [Quota("requests", "retry", None, 0, reset, now, "retry-after")] if reset and reset > now else []


def error_object(body: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else {}


def from_gemini(error: dict[str, Any], now: float) -> list[Quota]:
    """google.rpc QuotaFailure (which quota, its value) and RetryInfo (when to come back)."""
    details = [d for d in error.get("details") or [] if isinstance(d, dict)]
    kinds = [(str(d.get("@type", "")), d) for d in details]
    delay = next((d.get("retryDelay") for kind, d in kinds if kind.endswith("RetryInfo")), None)
    wait = duration_s(str(delay)) if delay else None
    found = []
    for kind, detail in kinds:
        if not kind.endswith("QuotaFailure"):
            continue
        for violation in detail.get("violations") or []:
            quota_id = str(violation.get("quotaId", ""))
            metric = "tokens" if "token" in quota_id.lower() else "requests"
            window = "day" if "perday" in quota_id.lower() else "minute"
            reset = now + wait if wait is not None else now + WINDOW_S[window]
            value = _int(violation.get("quotaValue"))
            found.append(Quota(metric, window, value, 0, reset, now, "gemini quota"))
    if not found and wait is not None:
        found.append(Quota("requests", "retry", None, 0, now + wait, now, "gemini retry-info"))
    return found


def quotas_from(
    headers: Mapping[str, str], status: int | None, body: str, host: str, now: float
) -> list[Quota]:
    """Every record one reply carries; a 429 adds its Retry-After and its body's quota details."""
    error = error_object(body) if status == 429 else {}
    message = str(error.get("message", ""))
    found = from_headers(headers, host, now, message)
    if status == 429:
        metadata = error.get("metadata")
        embedded = metadata.get("headers") if isinstance(metadata, dict) else None
        if isinstance(embedded, dict):
            found += from_headers({str(k): str(v) for k, v in embedded.items()}, host, now, message)
        found += from_gemini(error, now)
        found += from_retry_after(headers.get("retry-after"), now)
    return found

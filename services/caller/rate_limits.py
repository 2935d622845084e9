"""Learning from a failed call's text (SPEC L-3): that the model is rate-limited and for how long, the
limit it states, and its context window.

Pure text parsing. The results become `CooldownStarted` and `LimitLearned` events.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

DEFAULT_COOLDOWN_S = 1800.0
MAX_WAIT_S = 24 * 3600.0

RATE_LIMIT_RE = re.compile(
    r"rate[ _-]?limit|too many requests|\b429\b|quota exceeded|exceeded your current quota"
    r"|resource_?exhausted",
    re.IGNORECASE,
)
DURATION_PART = (
    r"(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)(?![a-z])"
)
TRY_AGAIN_RE = re.compile(r"try again in\s+((?:\d+(?:\.\d+)?\s*[a-z]+\s*)+)", re.IGNORECASE)
RETRY_DELAY_RE = re.compile(r"retryDelay\"?\s*[:=]\s*\"?(\d+(?:\.\d+)?)s", re.IGNORECASE)
RETRY_AFTER_RE = re.compile(r"retry-after\"?\s*[:=]\s*\"?(\d+(?:\.\d+)?)", re.IGNORECASE)
# Each axis by the names providers give it (OpenAI "requests per min (RPM)", Gemini "RequestsPerMinute").
AXIS_NAMES = {
    "rpm": re.compile(r"requests[ _]?per[ _]?min(?:ute)?|\bRPM\b|requests/min", re.IGNORECASE),
    "rpd": re.compile(r"requests[ _]?per[ _]?day|\bRPD\b|requests/day", re.IGNORECASE),
    "tpm": re.compile(r"tokens[ _]?per[ _]?min(?:ute)?|\bTPM\b|tokens/min", re.IGNORECASE),
    "tpd": re.compile(r"tokens[ _]?per[ _]?day|\bTPD\b|tokens/day", re.IGNORECASE),
}
LIMIT_RE = re.compile(r"\blimit\b\W{0,3}(\d[\d,]*)", re.IGNORECASE)
CONTEXT_RE = re.compile(r"maximum context length is\s+(\d[\d,]*)", re.IGNORECASE)
MIN_CONTEXT = 512


def duration_s(text: str) -> float | None:
    """`6m0s`, `2.5s`, `20ms`, `1 minute`, `1h 30m` → seconds."""
    total, found = 0.0, False
    for number, unit in re.findall(DURATION_PART, text, re.IGNORECASE):
        total += float(number) * unit_seconds(unit.lower())
        found = True
    return total if found else None


def unit_seconds(unit: str) -> float:
    if unit.startswith(("ms", "milli")):
        return 0.001
    return {"h": 3600.0, "m": 60.0}.get(unit[0], 1.0)


def stated_wait_s(text: str) -> float | None:
    """The wait a provider asked for: Retry-After, Gemini's retryDelay, or "try again in N s|m|h"."""
    for pattern in (RETRY_AFTER_RE, RETRY_DELAY_RE):
        match = pattern.search(text)
        if match:
            return float(match.group(1))
    match = TRY_AGAIN_RE.search(text)
    return duration_s(match.group(1)) if match else None


def is_rate_limited(text: str) -> bool:
    return bool(RATE_LIMIT_RE.search(text)) or stated_wait_s(text) is not None


def cooldown_until(text: str, now: datetime) -> tuple[datetime, str] | None:
    """When a rate-limited model may be used again (whole seconds), and why in our own words (never the
    provider's message)."""
    if not text or not is_rate_limited(text):
        return None
    stated = stated_wait_s(text)
    if stated is not None and stated > 0:
        wait, source = min(stated, MAX_WAIT_S), "stated"
    else:
        wait, source = DEFAULT_COOLDOWN_S, "default"
    until = datetime.fromtimestamp(math.ceil((now + timedelta(seconds=wait)).timestamp()), UTC)
    return until, f"rate limited; resting {wait:g}s ({source} wait)"


def stated_limit(text: str) -> tuple[str, int] | None:
    """A "limit N" for exactly one named axis ("Limit 30 … requests per minute" → ("rpm", 30))."""
    axes = [axis for axis, pattern in AXIS_NAMES.items() if pattern.search(text)]
    match = LIMIT_RE.search(text)
    if len(axes) != 1 or match is None:
        return None
    value = int(match.group(1).replace(",", ""))
    return (axes[0], value) if value > 0 else None


def stated_context(text: str) -> int | None:
    """"maximum context length is N" (N ≥ 512)."""
    match = CONTEXT_RE.search(text)
    value = int(match.group(1).replace(",", "")) if match else 0
    return value if value >= MIN_CONTEXT else None

"""When to try a provider call again, and how long to wait first (SPEC U-4).

Pure: the time and the dice are inputs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

from services.caller.outcome import CallOutcome

RETRY_STATUSES = frozenset({408, 409, 429})
RETRY_AFTER_MAX_S = 60.0
BACKOFF_FIRST_S = 0.5
BACKOFF_CAP_S = 8.0
JITTER = 0.2
BUDGET_KEYS = ("max_tokens", "max_completion_tokens")
Chance = Callable[[], float]  # a draw in [0, 1)


def is_retryable(outcome: CallOutcome) -> bool:
    """Connection errors, 408, 409, 429 and 5xx: the kinds a second try often cures."""
    if outcome.connection_failed:
        return True
    status = outcome.http_status
    return status is not None and (status in RETRY_STATUSES or status >= 500)


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Retry-After as seconds (a number or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - now
    except (TypeError, ValueError):
        return None


def backoff_s(retry_number: int, retry_after: float | None, chance: Chance = random.random) -> float:
    """The provider's Retry-After when sane (0 < wait ≤ 60 s), else ~0.5 s, ~1 s, … jittered, cap 8 s."""
    if retry_after is not None and 0 < retry_after <= RETRY_AFTER_MAX_S:
        return retry_after
    base = min(BACKOFF_CAP_S, BACKOFF_FIRST_S * 2 ** (retry_number - 1))
    return min(BACKOFF_CAP_S, base * (1 - JITTER + 2 * JITTER * chance()))


def retry_wait(
    outcome: CallOutcome, retries_done: int, max_retries: int, now: float, deadline: float,
    chance: Chance = random.random,
) -> float | None:
    """Seconds to wait before the next try, or None when there is none (never waits past the deadline)."""
    if retries_done >= max_retries or not is_retryable(outcome):
        return None
    wait = backoff_s(retries_done + 1, retry_after_seconds(outcome.retry_after, now), chance)
    return wait if now + wait < deadline else None


def doubled_budget(outcome: CallOutcome, purpose: str, options: dict[str, Any],
                   max_output: int | None = None) -> dict[str, Any] | None:
    """U-4: a panel seat's empty answer cut by the token limit gets one more try with twice the budget.

    Returns the new options, or None when this outcome does not qualify (or no budget was set to double).
    """
    if purpose != "panel" or outcome.error or outcome.text.strip() or outcome.finish != "length":
        return None
    key = next((k for k in BUDGET_KEYS if isinstance(options.get(k), int)), None)
    if key is None:
        return None
    doubled = options[key] * 2
    if max_output:
        doubled = min(doubled, max_output)
    return {**options, key: doubled} if doubled > options[key] else None

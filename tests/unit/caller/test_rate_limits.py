"""L-3: recognising a rate limit in an error text and the wait it states."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.caller.rate_limits import (
    cooldown_until,
    duration_s,
    is_rate_limited,
    stated_context,
    stated_limit,
    stated_wait_s,
)

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
OPENAI_429 = (
    'Error: Error code: 429 - {"error": {"message": "Rate limit reached for m in organization org on '
    'requests per min (RPM): Limit 30, Used 30, Requested 1. Please try again in 2.5s."}}'
)


@pytest.mark.parametrize(
    "text",
    [
        "Rate limit exceeded",
        "rate_limit_exceeded",
        "Too Many Requests",
        "Error: Error code: 429 - {}",
        "You exceeded your current quota",
        "Quota exceeded for metric",
        "RESOURCE_EXHAUSTED",
        "ResourceExhausted",
        "please try again in 20s",
    ],
)
def test_rate_limited_texts(text: str) -> None:
    assert is_rate_limited(text)


@pytest.mark.parametrize(
    "text",
    [
        "Error: Error code: 500 - internal",
        "Error: Error code: 401 - invalid key",
        "no answer in 420s",
        "context length 4290 exceeded",
    ],
)
def test_not_rate_limited_texts(text: str) -> None:
    assert not is_rate_limited(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        (OPENAI_429, 2.5),
        ("Error: Error code: 429 - {} Retry-After: 7", 7.0),
        ('{"error": {"details": [{"@type": "RetryInfo", "retryDelay": "31s"}]}}', 31.0),
        ("Please try again in 6m0s.", 360.0),
        ("Please try again in 20ms.", 0.02),
        ("try again in 1 minute", 60.0),
        ("try again in 2h", 7200.0),
        ("try again in 1h 30m", 5400.0),
    ],
)
def test_stated_waits(text: str, seconds: float) -> None:
    assert stated_wait_s(text) == pytest.approx(seconds)


def test_no_stated_wait() -> None:
    assert stated_wait_s("Rate limit exceeded") is None
    assert duration_s("soon") is None


def test_cooldown_until_the_stated_wait_in_whole_seconds() -> None:
    rest = cooldown_until(OPENAI_429, NOW)
    assert rest is not None
    until, why = rest
    assert until == NOW + timedelta(seconds=3)
    assert why == "rate limited; resting 2.5s (stated wait)"
    assert "org" not in why  # our words, never the provider's message


def test_cooldown_defaults_to_30_minutes() -> None:
    rest = cooldown_until("Error: Error code: 429 - Too Many Requests", NOW)
    assert rest is not None and rest[0] == NOW + timedelta(seconds=1800) and "default" in rest[1]


def test_cooldown_is_capped_at_a_day() -> None:
    rest = cooldown_until("quota exceeded; try again in 72h", NOW)
    assert rest is not None and rest[0] == NOW + timedelta(hours=24)


def test_no_cooldown_for_other_errors() -> None:
    assert cooldown_until("Error: Error code: 500 - boom", NOW) is None
    assert cooldown_until("", NOW) is None


def test_a85_a_limit_is_stated_for_exactly_one_axis() -> None:
    assert stated_limit(OPENAI_429) == ("rpm", 30)
    assert stated_limit("Limit 500000, Used 499000: tokens per day (TPD)") == ("tpd", 500000)
    gemini = (
        "Quota exceeded for metric: generate_content_free_tier_requests, limit: 10, "
        "quotaId GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
    )
    assert stated_limit(gemini) == ("rpm", 10)
    assert stated_limit("Limit 30 requests per minute and 1000 tokens per minute") is None  # two axes
    assert stated_limit("requests per minute exceeded") is None  # no number


def test_a_context_window_stated_in_an_error() -> None:
    assert stated_context("This model's maximum context length is 128,000 tokens") == 128000
    assert stated_context("maximum context length is 100") is None

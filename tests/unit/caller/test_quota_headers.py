"""L-4: quota records from headers and 429 bodies, resets stored as absolute times (A-91)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from services.caller.quota_headers import Quota, quotas_from, reset_time

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC).timestamp()


def test_a91_groq_requests_headers_are_a_per_day_record_with_an_absolute_reset() -> None:
    headers = {
        "x-ratelimit-limit-requests": "14400",
        "x-ratelimit-remaining-requests": "14370",
        "x-ratelimit-reset-requests": "2m59.56s",
        "x-ratelimit-limit-tokens": "6000",
        "x-ratelimit-remaining-tokens": "5997",
        "x-ratelimit-reset-tokens": "30ms",
    }
    records = {r.metric: r for r in quotas_from(headers, 200, "", "api.groq.com", NOW)}
    day, tokens = records["requests"], records["tokens"]
    assert (day.window, day.limit, day.remaining, day.observed_at) == ("day", 14400, 14370, NOW)
    assert day.reset_at == pytest.approx(NOW + 179.56)  # absolute: observed + 2m59.56s
    assert (tokens.window, tokens.remaining, tokens.reset_at) == ("minute", 5997, pytest.approx(NOW + 0.03))


def test_openai_headers_default_to_minute_and_suffixes_name_the_window() -> None:
    headers = {
        "X-RateLimit-Limit-Requests": "500",
        "X-RateLimit-Remaining-Requests": "499",
        "X-RateLimit-Reset-Requests": "120ms",
        "x-ratelimit-remaining-requests-day": "9",
        "x-ratelimit-reset-requests-day": "1h",
    }
    records = {(r.metric, r.window): r for r in quotas_from(headers, 200, "", "api.openai.com", NOW)}
    assert records[("requests", "minute")].remaining == 499
    assert records[("requests", "day")].reset_at == NOW + 3600 and records[("requests", "day")].limit is None


def test_anthropic_headers_with_rfc3339_resets() -> None:
    headers = {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2026-12-02T12:00:30Z",
        "anthropic-ratelimit-input-tokens-limit": "40000",
        "anthropic-ratelimit-input-tokens-remaining": "39000",
        "anthropic-ratelimit-input-tokens-reset": "2026-12-02T12:00:01Z",
    }
    records = {r.metric: r for r in quotas_from(headers, 200, "", "api.anthropic.com", NOW)}
    assert records["requests"] == Quota("requests", "minute", 50, 0, NOW + 30, NOW, "anthropic-ratelimit")
    assert records["input_tokens"].remaining == 39000


def test_a_429_adds_retry_after_and_bare_headers_take_the_window_from_the_message() -> None:
    body = json.dumps({"error": {"message": "Rate limit exceeded: free-models-per-day", "code": 429}})
    headers = {
        "x-ratelimit-limit": "50",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": "1764720000000",
        "retry-after": "2",
    }
    records = {(r.metric, r.window): r for r in quotas_from(headers, 429, body, "openrouter.ai", NOW)}
    assert records[("requests", "day")].reset_at == 1764720000.0
    assert records[("requests", "retry")] == Quota("requests", "retry", None, 0, NOW + 2, NOW, "retry-after")
    assert not [r for r in quotas_from({"retry-after": "2"}, 200, "", "h", NOW) if r.window == "retry"]


def test_openrouter_error_metadata_headers() -> None:
    body = json.dumps(
        {
            "error": {
                "message": "Rate limit exceeded: free-models-per-min",
                "code": 429,
                "metadata": {
                    "headers": {
                        "X-RateLimit-Limit": "20",
                        "X-RateLimit-Remaining": "0",
                        "X-RateLimit-Reset": "1764676830000",
                    }
                },
            }
        }
    )
    [record] = quotas_from({}, 429, body, "openrouter.ai", NOW)
    assert (record.window, record.limit, record.remaining, record.reset_at) == ("minute", 20, 0, 1764676830.0)


def test_gemini_quota_failure_and_retry_info() -> None:
    body = json.dumps(
        {
            "error": {
                "code": 429,
                "status": "RESOURCE_EXHAUSTED",
                "message": "quota",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                        "violations": [
                            {
                                "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                                "quotaValue": "250",
                            }
                        ],
                    },
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "32s"},
                ],
            }
        }
    )
    [record] = quotas_from({}, 429, body, "generativelanguage.googleapis.com", NOW)
    assert record == Quota("requests", "day", 250, 0, NOW + 32, NOW, "gemini quota")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("6m0s", NOW + 360),
        ("20ms", NOW + 0.02),
        ("1.5", NOW + 1.5),
        ("1764676800", 1764676800.0),
        ("1764676800123", 1764676800.123),
        ("2026-12-02T12:01:00Z", NOW + 60),
        ("Wed, 02 Dec 2026 12:02:00 GMT", NOW + 120),
        ("soon", None),
    ],
)
def test_reset_formats(value: str, expected: float | None) -> None:
    found = reset_time(value, NOW)
    assert found == (pytest.approx(expected) if expected is not None else None)

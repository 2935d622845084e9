"""HL-1: every call's outcome gets one failure class, tried in the SPEC's order."""

from __future__ import annotations

import pytest

from shared.failures import failure_class


@pytest.mark.parametrize(("status", "error", "expected"), [
    ("error", "no answer in 90s", "timeout"),
    ("error", "Error: client failed: connection error: ReadTimeout", "timeout"),
    ("error", 'Error: Error code: 401 - {"error": "bad key"}', "signin"),
    ("error", "Error: please sign in again", "signin"),
    ("error", 'Error: Error code: 404 - {"error": {"message": "The model `x` does not exist"}}',
     "structural"),
    ("error", 'Error: Error code: 404 - {"error": "No endpoints found for meta/llama:free"}', "structural"),
    ("error", "Error: Error code: 400 - invalid model id", "structural"),
    ("error", "Error: Error code: 404 - unavailable for free; use this slug instead", "paywalled"),
    ("error", "Error: Error code: 402 - Payment Required", "entitlement"),
    ("error", "Error: Error code: 403 - insufficient credit on your account", "entitlement"),
    ("error", "provider notice in a success reply (run out of credits): You have run out", "entitlement"),
    ("error", "Error: client failed: not sent: the free-tier guard holds m (payment required: $)",
     "entitlement"),
    ("error", "Error: Error code: 429 - Rate limit reached for m", "capacity"),
    ("error", "Error: client failed: rate limit (not sent; paced by the bench): rpm 10", "capacity"),
    ("error", "Error: Error code: 503 - upstream busy", "capacity"),
    ("error", "Error: provider error: RESOURCE_EXHAUSTED", "capacity"),
    ("error", "Error: client failed: connection error: ConnectError: refused", "other"),
    ("error", "Error: client failed: connection error: ConnectTimeout: Cannot connect to host", "other"),
    ("error", "Error: Error code: 400 - something else", "other"),
    ("empty", "", "empty"),
])
def test_each_outcome_falls_in_the_first_class_that_matches(status: str, error: str, expected: str) -> None:
    assert failure_class(status, error) == expected


def test_an_answer_has_no_class_and_only_the_first_400_characters_are_read() -> None:
    assert failure_class("ok", "") is None
    assert failure_class("error", "x" * 400 + " rate limit") == "other"

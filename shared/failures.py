"""HL-1: what kind of failure a call's outcome was, read from its error (or answer) text. Pure.

The ledger stores the class with every call, the prober's auto-retire rules (HL-5) weigh evidence by it,
and the model status shows the latest. Classes are tried in the SPEC's order; the first that matches wins.
"""

from __future__ import annotations

import re
from typing import Literal

FailureClass = Literal[
    "timeout", "signin", "structural", "paywalled", "entitlement", "capacity", "empty", "other"
]
CLASSES: tuple[FailureClass, ...] = (
    "timeout", "signin", "structural", "paywalled", "entitlement", "capacity", "empty", "other"
)
# The classes that say the model itself is gone or closed to us (HL-5's immediate rule).
HARD: tuple[FailureClass, ...] = ("structural", "paywalled", "entitlement")
READ_CHARS = 400

_RULES: tuple[tuple[FailureClass, re.Pattern[str]], ...] = (
    # A refused connection (aiohttp calls it ConnectTimeout) is no timeout: the endpoint is unreachable.
    ("timeout", re.compile(r"^no answer in |timed out|\btimeout\b|readtimeout", re.I)),
    ("signin", re.compile(r"error code: 401\b|sign in again|sharing_usage_unavailable", re.I)),
    ("structural", re.compile(
        r"model[^.]{0,40}not found|not a valid model|no endpoints found|does not exist|"
        r"(unknown|invalid) model", re.I)),
    ("paywalled", re.compile(
        r"unavailable for free|use this slug instead|free launch period|variant has been retired|"
        r"no longer (available|free)", re.I)),
    ("entitlement", re.compile(
        r"subscription|unauthori[sz]ed|permission denied|insufficient (balance|credit|funds)|"
        r"payment required|only available (on|to|for)|provider notice|error code: 40[23]\b", re.I)),
    ("capacity", re.compile(
        r"rate.?limit|quota exceeded|too many requests|request too large|context length|overloaded|"
        r"error code: 5\d\d\b|provider returned error|request limit reached|resource.?exhausted|"
        r"error code: 429\b", re.I)),
)


def failure_class(status: str, error: str, answer: str = "") -> FailureClass | None:
    """The class of a failed or empty call; None when it answered. `status` is ok | empty | error."""
    if status == "ok":
        return None
    text = (error or answer)[:READ_CHARS]
    for name, pattern in _RULES:
        if pattern.search(text):
            return name
    return "empty" if status == "empty" else "other"

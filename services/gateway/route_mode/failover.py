"""Failover and the turn's status (RM-6), as a small state machine with no clock of its own.

A turn walks up to three members in order. A member that fails before its first piece of answer (an HTTP
error, 429 and 5xx included; a pacing refusal; nothing at all within the first-piece window; an empty
reply, even after reasoning) is replaced by the next, invisibly: only `bench.failed_over` tells. Non-last
members get no client retries (the next member is the retry), the last gets the usual two. The last
member's empty reply is its answer. Once a member went live, no other model can continue its half-written
answer: a failure then ends the stream in the format's error shape.

The desk and the turn own the clocks: `FIRST_PIECE_WINDOW_S` per member, `GRACE_S` before a streamed 200 (so a
turn failing everywhere quickly keeps its status), `TURN_DEADLINE_S` for the whole turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from services.gateway.route_mode.conversation import canonical_collection

MAX_MEMBERS = 3
FIRST_PIECE_WINDOW_S = 90.0
GRACE_S = 15.0
KEEPALIVE_S = 10.0
TURN_DEADLINE_S = 600.0
LAST_MEMBER_RETRIES = 2
ERROR_CHARS = 300
EMPTY_REPLY = "empty reply (no text and no tool call)"
RATE_LIMITED = ("error code: 429", "rate limit")


def silent(window_s: float = FIRST_PIECE_WINDOW_S) -> str:
    """The failure of a member that sent nothing at all (text, reasoning or a tool call) in its window."""
    return f"nothing in {window_s:g}s (no text, reasoning or tool call)"


def short(error: str) -> str:
    return error if len(error) <= ERROR_CHARS else error[: ERROR_CHARS - 1] + "…"


def rate_limited(error: str) -> bool:
    lowered = error.lower()
    return any(mark in lowered for mark in RATE_LIMITED)


@dataclass(frozen=True)
class Attempt:
    """One member's go at the turn."""

    alias: str
    position: int  # 1, 2, 3
    last: bool
    retries: int  # client retries for this call (U-4): 0 unless it is the last member


@dataclass(frozen=True)
class FailedOver:
    alias: str
    error: str  # ≤ 300 chars

    def as_json(self) -> dict[str, str]:
        return {"alias": self.alias, "error": self.error}


@dataclass(frozen=True)
class TurnFailure:
    """The turn's error: its HTTP status (before the 200) or the stream's error (after it), and message."""

    status: int
    message: str


State = Literal["trying", "live", "answered_empty", "failed"]


class Failover:
    """One turn's walk down its order."""

    def __init__(self, collection: str, order: Sequence[str], limit: int = MAX_MEMBERS) -> None:
        self.collection = canonical_collection(collection)
        tried = list(dict.fromkeys(order))[:limit]
        if not tried:
            raise ValueError("a route turn needs at least one member to try")
        self.attempts = tuple(
            Attempt(alias, n, n == len(tried), LAST_MEMBER_RETRIES if n == len(tried) else 0)
            for n, alias in enumerate(tried, 1)
        )
        self._at = 0
        self.state: State = "trying"
        self.failures: list[tuple[str, str]] = []  # (alias, full error) of each member failed over

    @property
    def current(self) -> Attempt | None:
        """The member being tried, or that went live; None once every member failed."""
        return None if self.state == "failed" else self.attempts[self._at]

    @property
    def tried(self) -> list[str]:
        """The members asked so far (RM-9 `tried`)."""
        return [a.alias for a in self.attempts[: self._at + 1]]

    @property
    def failed_over(self) -> list[FailedOver]:
        return [FailedOver(alias, short(error)) for alias, error in self.failures]

    def _member(self) -> Attempt:
        if self.state != "trying":
            raise RuntimeError(f"no member is being tried (the turn is {self.state})")
        return self.attempts[self._at]

    def failed(self, error: str) -> Attempt | None:
        """The current member failed before its first piece: the next member to try, or None when none is
        left (then `failure()` is the turn's status)."""
        self.failures.append((self._member().alias, error))
        if self._at + 1 < len(self.attempts):
            self._at += 1
            return self.attempts[self._at]
        self.state = "failed"
        return None

    def empty(self) -> Attempt | None:
        """The current member's reply ended with neither text nor a tool call. From the last member that is
        the answer (None, state `answered_empty`); otherwise it fails over like any failure."""
        if self._member().last:
            self.state = "answered_empty"
            return None
        return self.failed(EMPTY_REPLY)

    def went_live(self) -> Attempt:
        """The current member's first piece arrived: from here on it is the turn's only member."""
        attempt = self._member()
        self.state = "live"
        return attempt

    def failure(self) -> TurnFailure:
        """Every member failed before its first piece: 429 when every failure was a rate limit, else 502."""
        if self.state != "failed":
            raise RuntimeError(f"the turn has not failed (it is {self.state})")
        status = 429 if all(rate_limited(error) for _, error in self.failures) else 502
        listing = "; ".join(f"{f.alias}: {f.error}" for f in self.failed_over)
        return TurnFailure(status, f"no member of {self.collection} answered: {listing}")

    def part_way(self, error: str, status: int | None = None) -> TurnFailure:
        """The live member failed after its first piece: the stream ends with this error."""
        alias = self.current.alias if self.current else "?"
        code = status if status is not None and status >= 400 else 502
        return TurnFailure(code, f"{alias} failed part way through the turn: {error}")

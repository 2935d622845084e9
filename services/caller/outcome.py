"""What one upstream call produced, and the seat result made from it (SPEC U-3, P-11)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from services.caller.quota_headers import Quota

Paced = Literal["sent", "waited", "refused"]  # L-2a: how pacing treated a call
ERROR_TAIL = 500
NOTICE_MAX_CHARS = 400
NOTICE_EXCERPT = 200
# Quota/credit notices some providers send as a normal answer (P-11); the first phrase found is named.
NOTICE_PHRASES = (
    "run out of credits",
    "out of credits",
    "upgrade your plan",
    "daily limit reached",
    "insufficient credits",
    "insufficient balance",
    "credit balance is too low",
    "quota exceeded",
    "payment required",
)


@dataclass
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0
    reasoning: int = 0
    cached: int = 0

    @classmethod
    def from_openai(cls, usage: dict[str, Any]) -> Usage:
        completion_details = usage.get("completion_tokens_details") or {}
        prompt_details = usage.get("prompt_tokens_details") or {}
        return cls(
            tokens_in=int(usage.get("prompt_tokens") or 0),
            tokens_out=int(usage.get("completion_tokens") or 0),
            reasoning=int(completion_details.get("reasoning_tokens") or 0),
            cached=int(prompt_details.get("cached_tokens") or 0),
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.tokens_in + other.tokens_in, self.tokens_out + other.tokens_out,
                     self.reasoning + other.reasoning, self.cached + other.cached)


@dataclass
class ToolCall:
    id: str = ""
    type: str = "function"
    name: str = ""
    arguments: str = ""


@dataclass
class CallOutcome:
    """One HTTP attempt's result. `error` empty means the provider answered (possibly with nothing)."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    finish: str | None = None
    model: str = ""
    error: str = ""
    http_status: int | None = None
    retry_after: str | None = None
    connection_failed: bool = False
    quotas: list[Quota] = field(default_factory=list)  # what the reply said about the provider's limits
    first_token_s: float | None = None  # a streamed reply: its first event, seconds after sending
    # When the request's last byte left (wall clock; None: unknown). A provider counts its windows from the
    # request's arrival, so the pacer counts this attempt's from here too (L-2).
    sent_at: float | None = None

    @property
    def produced_output(self) -> bool:
        return bool(self.text or self.reasoning or self.tool_calls)


@dataclass
class CallReport:
    """The call as a whole: the last attempt's outcome, HTTP requests sent, usage summed over attempts,
    and how pacing treated it (L-2a)."""

    outcome: CallOutcome
    attempts: int
    usage: Usage | None
    seconds: float
    paced: Paced = "sent"
    waited_s: float = 0.0
    quotas: list[Quota] = field(default_factory=list)


class Tally:
    """HTTP requests sent (counted when sent, so one cut off by the deadline counts), the usage and quotas
    they reported, and the time pacing held them, across retries."""

    def __init__(self) -> None:
        self.attempts = 0
        self.usage: Usage | None = None
        self.waited = False
        self.waited_s = 0.0
        self.refused = False
        self.quotas: list[Quota] = []

    def sent(self) -> None:
        self.attempts += 1

    def answered(self, outcome: CallOutcome) -> None:
        if outcome.usage is not None:
            self.usage = outcome.usage if self.usage is None else self.usage + outcome.usage
        if outcome.quotas:
            self.quotas = outcome.quotas

    @property
    def paced(self) -> Paced:
        if self.refused and not self.attempts:
            return "refused"
        return "waited" if self.waited else "sent"


def client_failed(why: str) -> CallOutcome:
    return CallOutcome(error=f"Error: client failed: {why}")


def no_answer_text(timeout_s: float) -> str:
    return f"no answer in {timeout_s:g}s"


def notice_phrase(answer: str) -> str | None:
    """A short success reply that is really a provider's quota/credit notice, by the phrase it contains."""
    if len(answer) > NOTICE_MAX_CHARS:
        return None
    lowered = answer.lower()
    return next((p for p in NOTICE_PHRASES if p in lowered), None)


@dataclass(frozen=True)
class SeatResult:
    """P-11: the seat's status, answer and error as recorded."""

    status: str
    seconds: float
    answer: str
    error: str


def seat_result(answer: str, error: str, seconds: float) -> SeatResult:
    if not error:
        phrase = notice_phrase(answer)
        if phrase:
            error = f"provider notice in a success reply ({phrase}): {answer.strip()[:NOTICE_EXCERPT]}"
            answer = ""
    status = "error" if error else ("empty" if not answer.strip() else "ok")
    return SeatResult(status=status, seconds=round(seconds, 1), answer=answer, error=error[-ERROR_TAIL:])

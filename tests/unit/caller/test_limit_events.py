"""What a finished call teaches: A-85's learned limit, and quota records published sparingly."""

from __future__ import annotations

from services.caller.limit_book import LimitBook
from services.caller.limit_events import QuotaNews, limits_learned
from services.caller.outcome import CallOutcome, CallReport
from services.caller.quota_headers import Quota
from shared.commands import SeatCall
from shared.config_state import ConfigState
from shared.events import LimitsSaved

A85 = (
    'Error: Error code: 429 - {"error": {"message": "Rate limit reached for m on requests per minute: '
    'Limit 30, Used 30, Requested 1. Please try again in 2.5s."}}'
)
CONTEXT = "Error: Error code: 400 - This model's maximum context length is 8192 tokens."


def call() -> SeatCall:
    return SeatCall.model_validate(
        {
            "call": "p20261202-120000-abcd.member1",
            "panel": "p20261202-120000-abcd",
            "seat": "member",
            "alias": "llama",
            "served": "llama-3",
            "endpoint": "groq",
            "base": "https://api.groq.com/openai/v1",
            "connection": "groq",
            "messages": [{"role": "user", "content": "hi"}],
            "deadline": 2e9,
        }
    )


def report(error: str, attempts: int = 1, quotas: list[Quota] | None = None) -> CallReport:
    return CallReport(CallOutcome(error=error), attempts, None, 1.0, quotas=quotas or [])


def test_a85_a_stated_limit_is_learned_when_lower() -> None:
    book = LimitBook(ConfigState())
    [event] = limits_learned(call(), report(A85), book)
    assert (event.alias, event.connection, event.axis, event.limit, event.id) == (
        "llama",
        "groq",
        "rpm",
        30,
        "learned:llama:rpm:30",
    )
    assert (
        "p20261202-120000-abcd.member1" in event.why and "Rate limit" not in event.why
    )  # never the raw text
    book.fold(event)
    assert limits_learned(call(), report(A85), book) == []  # not lower than what is known now


def test_nothing_is_learned_when_the_user_limit_is_tighter_or_the_call_was_not_sent() -> None:
    config = ConfigState()
    config.apply(LimitsSaved(id="cfg:1", scope="connection", name="groq", rpm=10), 1)
    assert limits_learned(call(), report(A85), LimitBook(config)) == []
    assert limits_learned(call(), report(A85, attempts=0), LimitBook(ConfigState())) == []


def test_a_context_window_is_learned() -> None:
    [event] = limits_learned(call(), report(CONTEXT), LimitBook(ConfigState()))
    assert (event.axis, event.limit) == ("context", 8192)


def test_quota_news_is_published_when_used_up_or_every_ten_seconds() -> None:
    news = QuotaNews()
    plenty = [Quota("requests", "day", 14400, 14000, 2e9, 1e9, "x-ratelimit")]
    used_up = [Quota("requests", "minute", 30, 0, 2e9, 1e9, "x-ratelimit")]
    first = news.event(call(), plenty, 1000.0)
    assert first is not None and first.id == "quota:p20261202-120000-abcd.member1"
    assert (
        first.records[0].limit == 14400
        and first.records[0].reset_at is not None
        and first.records[0].reset_at.year == 2033
    )
    assert news.event(call(), plenty, 1005.0) is None
    assert news.event(call(), used_up, 1006.0) is not None
    assert news.event(call(), plenty, 1017.0) is not None
    assert news.event(call(), [], 2000.0) is None

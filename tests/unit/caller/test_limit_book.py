"""L-1: which limits bind a call; L-3: learned limits only ever tighter, user limits win."""

from __future__ import annotations

from datetime import UTC, datetime

from services.caller.limit_book import LimitBook
from services.caller.pacing import Limit
from shared.config_state import ConfigState
from shared.events import LimitLearned, LimitsSaved, ModelRegistered

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def learned(alias: str, axis: str, n: int, seq: int = 0) -> LimitLearned:
    return LimitLearned.model_validate(
        {
            "id": f"learned:{alias}:{axis}:{n}",
            "alias": alias,
            "connection": "groq",
            "axis": axis,
            "limit": n,
            "at": AT,
        }
    )


def book_with(*events: object) -> LimitBook:
    book = LimitBook(ConfigState())
    for seq, event in enumerate(events, 1):
        if isinstance(event, LimitsSaved | ModelRegistered):
            book.config.apply(event, seq)
        elif isinstance(event, LimitLearned):
            book.fold(event, seq)
    return book


def test_user_limits_per_connection_and_model_and_learned_where_the_user_set_none() -> None:
    book = book_with(
        LimitsSaved(id="cfg:1", scope="connection", name="groq", rpm=30, rpmo=1000),
        LimitsSaved(id="cfg:2", scope="model", name="llama", rpd=100, rpmo=5),
        learned("llama", "rpd", 50),
        learned("llama", "tpm", 6000),
    )
    assert book.limits_for("groq", "llama") == [
        Limit("connection", "groq", "rpm", 30, "your limit"),
        Limit("connection", "groq", "rpmo", 1000, "your limit"),
        Limit("model", "llama", "rpd", 100, "your limit"),  # the user's wins over the learned 50
        Limit("model", "llama", "tpm", 6000, "learned 2026-12-01"),
    ]  # a model's rpmo is not a thing (L-1: rpmo per connection)
    assert book.limits_for("other", "qwen") == []


def test_saving_no_values_clears_a_scope() -> None:
    book = book_with(
        LimitsSaved(id="cfg:1", scope="connection", name="groq", rpm=30),
        LimitsSaved(id="cfg:2", scope="connection", name="groq"),
    )
    assert book.limits_for("groq", "llama") == [] and "groq" not in book.config.connection_limits


def test_learned_limits_only_ever_tighten() -> None:
    book = book_with(
        LimitsSaved(id="cfg:1", scope="connection", name="groq", rpm=30),
        ModelRegistered(id="cfg:2", alias="llama", served="llama-3", endpoint="groq", context_window=8192),
        learned("llama", "rpd", 50),
        learned("llama", "rpd", 80),
    )
    assert book.learned[("llama", "rpd")].limit == 50  # a looser statement later does not loosen it
    assert book.is_tighter("groq", "llama", "rpm", 20) and not book.is_tighter("groq", "llama", "rpm", 30)
    assert book.is_tighter("groq", "llama", "rpd", 40) and not book.is_tighter("groq", "llama", "rpd", 60)
    assert book.is_tighter("groq", "llama", "tpm", 10**9)  # nothing known yet
    assert book.is_tighter("groq", "llama", "context", 4096)
    assert not book.is_tighter("groq", "llama", "context", 131072)

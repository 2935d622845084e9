"""RM-5 (A-50): the chat-completions request a member is sent."""

from __future__ import annotations

from typing import Any

from services.gateway.formats.anthropic import Anthropic
from services.gateway.formats.openai_chat import OpenAIChat
from services.gateway.route_mode.upstream_request import upstream_body, upstream_options

TOOLS = [{"type": "function", "function": {"name": "sh", "parameters": {"type": "object"}}}]
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
FIELDS: dict[str, Any] = {
    "tools": TOOLS,
    "tool_choice": {"type": "function", "function": {"name": "sh"}},
    "parallel_tool_calls": False,
    "seed": 7,
    "temperature": 0.2,
    "top_p": 0.9,
    "stop": ["END"],
    "response_format": {"type": "json_object"},
    "max_tokens": 32_000,
}


def test_max_tokens_is_cut_and_every_other_field_passes_unchanged() -> None:
    body = upstream_body("org/m-a", MESSAGES, FIELDS, max_output=8_192)
    assert body["max_tokens"] == 8_192  # cut, not refused
    for name in (
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "seed",
        "temperature",
        "top_p",
        "stop",
        "response_format",
    ):
        assert body[name] == FIELDS[name]
    assert body["model"] == "org/m-a" and body["messages"] == MESSAGES
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_a_budget_under_the_maximum_or_with_no_known_maximum_stays() -> None:
    assert upstream_options({"max_completion_tokens": 100}, max_output=8_192) == {
        "max_completion_tokens": 100
    }
    assert upstream_options({"max_completion_tokens": 50_000}, max_output=8_192) == {
        "max_completion_tokens": 8_192
    }
    assert upstream_options({"max_tokens": 50_000}) == {"max_tokens": 50_000}


def test_request_fields_win_over_the_models_own_options() -> None:
    own = {"temperature": 1.0, "max_tokens": 2_000, "top_p": 0.5}
    assert upstream_options({"temperature": 0.1}, own) == {
        "temperature": 0.1,
        "max_tokens": 2_000,
        "top_p": 0.5,
    }
    # the request's budget replaces the model's under either name, so a member never gets both
    assert upstream_options({"max_completion_tokens": 300}, own) == {
        "temperature": 1.0,
        "top_p": 0.5,
        "max_completion_tokens": 300,
    }


def test_fields_the_member_cannot_use_are_dropped_not_refused() -> None:
    asked = {
        "n": 3,
        "store": True,
        "metadata": {"a": "b"},
        "user": "u1",
        "audio": {},
        "modalities": ["text"],
        "web_search_options": {},
        "bench": {"reply": "route"},
        "with": ["x"],
        "model": "bench/core",
        "messages": [],
        "stream": False,
        "stream_options": {"include_usage": False},
        "temperature": None,
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "tools": [],
    }
    assert upstream_options(asked) == {}
    body = upstream_body("org/m", MESSAGES, asked)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert set(body) == {"model", "messages", "stream", "stream_options"}


def test_an_openai_chat_requests_fields_are_its_body() -> None:
    body = {"model": "bench/core:route", "messages": MESSAGES, "stream": True, **FIELDS, "n": 2}
    ask = OpenAIChat().parse(body, {})
    assert ask.route_fields == FIELDS
    translated = Anthropic().parse(
        {"model": "bench/core", "max_tokens": 50, "messages": MESSAGES, "temperature": 0.3}, {}
    )
    assert translated.route_fields == {"max_tokens": 50, "temperature": 0.3}

"""U-3: a silent swap is another model than registered, beyond prefixes, tags and date/version tails."""

from __future__ import annotations

import pytest

from services.caller.swaps import base_name, is_swap


@pytest.mark.parametrize(
    ("served", "replied"),
    [
        ("gpt-4o", "gpt-4o-2024-08-06"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("meta-llama/llama-3.3-70b-instruct:free", "Llama-3.3-70B-Instruct"),
        ("claude-3-5-sonnet-latest", "claude-3.5-sonnet-20241022"),
        ("gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"),
        ("gemini-2.0-flash", "gemini-2.0-flash-001"),
        ("gpt-4", "gpt-4-0613"),
        ("qwen2.5:7b", "qwen2.5:latest"),
        ("m-a", ""),  # a reply that names no model is no evidence
    ],
)
def test_not_a_swap(served: str, replied: str) -> None:
    assert not is_swap(served, replied)


@pytest.mark.parametrize(
    ("served", "replied"),
    [
        ("gpt-4o", "gpt-4o-mini-2024-07-18"),
        ("llama-3.3-70b", "qwen-2.5-72b"),
        ("deepseek/deepseek-r1:free", "deepseek-chat"),
    ],
)
def test_a_swap(served: str, replied: str) -> None:
    assert is_swap(served, replied)


def test_base_name() -> None:
    assert base_name("Anthropic/Claude-3.5_Sonnet-20241022:beta") == "claude-3-5-sonnet"

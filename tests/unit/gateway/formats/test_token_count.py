"""count_tokens / countTokens (H-G6, H-G9, A-39): the P-5 estimate, images at 2,500, no collection needed."""

from __future__ import annotations

import pytest

from services.gateway.formats.token_count import anthropic_count, gemini_count
from services.gateway.panel.flatten import image_placeholder
from shared.refusal import Refusal

TEXT = "x" * 400  # 400 chars → int(400 / 4 × 1.1) = 110


def with_image(url: str) -> int:
    """The text estimate of TEXT and the image's placeholder (P-10), plus 2,500 for the image (P-5)."""
    return int(len(f"{TEXT}\n\n{image_placeholder(url)}") / 4 * 1.1) + 2_500


def test_anthropic_counts_text_and_images() -> None:
    assert anthropic_count({"messages": [{"role": "user", "content": TEXT}]}) == {"input_tokens": 110}
    image = {"type": "image", "source": {"type": "url", "url": "https://x.io/a.png"}}
    body = {
        "model": "anything",
        "messages": [{"role": "user", "content": [{"type": "text", "text": TEXT}, image]}],
    }
    assert anthropic_count(body) == {"input_tokens": with_image("https://x.io/a.png")}


def test_anthropic_counts_system_and_agent_turns_without_refusing_them() -> None:
    body = {
        "system": "S" * 40,
        "tools": [{"name": "read", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "read", "input": {}}]},
        ],
    }
    flat = f"{'S' * 40}\n\nuser: hi\n\nassistant: "
    assert anthropic_count(body) == {"input_tokens": int(len(flat) / 4 * 1.1)}


def test_anthropic_count_refuses_what_messages_refuse() -> None:
    with pytest.raises(Refusal) as caught:
        anthropic_count({"messages": [{"role": "user", "content": [{"type": "document"}]}]})
    assert caught.value.status == 400


def test_gemini_counts_the_body_or_its_wrapped_request() -> None:
    contents = [
        {"role": "user", "parts": [{"text": TEXT}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}
    ]
    expected = {"totalTokens": with_image("data:image/png;base64,AAAA")}
    assert gemini_count({"contents": contents}) == expected
    assert gemini_count({"generateContentRequest": {"model": "models/x", "contents": contents}}) == expected
    assert gemini_count({"generate_content_request": {"contents": contents}}) == expected
    assert gemini_count({}) == {"totalTokens": 0}


def test_gemini_count_refuses_what_generation_refuses() -> None:
    with pytest.raises(Refusal) as caught:
        gemini_count({"contents": [{"role": "robot", "parts": []}]})
    assert caught.value.status == 400

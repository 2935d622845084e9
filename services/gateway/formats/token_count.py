"""Token counts without a model call (H-G6 Anthropic `count_tokens`, H-G9 Gemini `countTokens`, A-39).

The answer is the same P-5 estimate a panel's size check uses (chars / 4 × 1.1, plus 2,500 per image), of
the request's messages translated as its format translates them. No collection is checked: a client counts
before it knows where it will send the request.
"""

from __future__ import annotations

from typing import Any

from services.gateway.formats import anthropic_request, gemini_request
from services.gateway.formats.canonical import Message
from services.gateway.panel.flatten import estimate_tokens, flatten


def estimate(messages: list[Message]) -> int:
    flat = flatten(messages)
    return estimate_tokens(flat.system, flat.prompt, flat.images)


def anthropic_count(body: dict[str, Any]) -> dict[str, int]:
    """`POST /v1/messages/count_tokens` → `{"input_tokens"}`; refusals as `/v1/messages` would give them."""
    messages, _ = anthropic_request.request_messages(body)
    return {"input_tokens": estimate(messages)}


def gemini_count(body: dict[str, Any]) -> dict[str, int]:
    """`POST …/models/<model>:countTokens` → `{"totalTokens"}`, read from `generateContentRequest` when the
    body wraps one, else from the body itself; empty contents count 0."""
    wrapped = gemini_request.get(body, "generateContentRequest")
    request = wrapped if isinstance(wrapped, dict) else body
    messages, _ = gemini_request.request_messages(request, require=False)
    return {"totalTokens": estimate(messages)}

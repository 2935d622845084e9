"""Shared builders for the adapter tests: a canonical call and SSE framing."""

from __future__ import annotations

import json
from typing import Any

from shared.commands import SeatCall

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in these?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "image_url", "image_url": {"url": "https://img.example.com/cat.webp?size=2"}},
        ],
    },
    {
        "role": "assistant",
        "content": "Let me look it up.",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "cat"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "a cat"},
    {"role": "user", "content": "And so?"},
]
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a thing up",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
                "additionalProperties": False,
            },
        },
    }
]


def seat_call(api: str, **over: Any) -> SeatCall:
    fields: dict[str, Any] = {
        "call": "p20261202-120000-abcd.member1",
        "panel": "p20261202-120000-abcd",
        "seat": "member",
        "alias": "a",
        "served": "vendor-model",
        "endpoint": "ep",
        "base": "https://api.example.com/v1/",
        "api": api,
        "connection": "ep",
        "headers": {"X-Title": "bench"},
        "messages": [{"role": "user", "content": "hi"}],
        "deadline": 2e9,
    }
    fields.update(over)
    return SeatCall.model_validate(fields)


def sse_lines(*events: dict[str, Any], named: bool = True) -> list[str]:
    """SSE lines as a provider sends them: `event:` (when named), `data:`, blank."""
    lines: list[str] = []
    for event in events:
        if named:
            lines.append(f"event: {event.get('type', 'message')}")
        lines += [f"data: {json.dumps(event)}", ""]
    return lines

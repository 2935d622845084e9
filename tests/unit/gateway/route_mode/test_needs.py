"""RM-2's measure of a request, as the gateway sends it to the seater: tools, images, and the estimate."""

from __future__ import annotations

import json
from typing import Any

from services.gateway.panel.flatten import estimate_text
from services.gateway.route_mode.needs import request_estimate, turn_needs
from shared.commands import TurnNeeds

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
TOOL_DEF = {"type": "function", "function": {"name": "sh", "parameters": {"type": "object"}}}


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_the_estimate_counts_tool_calls_tool_definitions_and_images() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": '{"cmd": "ls -la"}'}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, IMAGE]},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "file.txt"},
    ]
    bare = request_estimate(messages, {})
    assert bare > 2_500
    with_tools = request_estimate(messages, {"tools": [TOOL_DEF]})
    extra = estimate_text(compact([call]) + compact([TOOL_DEF]))
    assert with_tools - bare == extra - estimate_text(compact([call]))
    needs = turn_needs(messages, {"tools": [TOOL_DEF]})
    assert needs == TurnNeeds(tools=True, images=1, estimate=with_tools)


def test_tool_history_without_tool_definitions_still_needs_a_tool_caller() -> None:
    results = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c", "content": "x"}]
    assert turn_needs(results, {}).tools
    assert not turn_needs([{"role": "user", "content": "hi"}], {"tools": []}).tools

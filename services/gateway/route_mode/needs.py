"""What a route-mode request asks of a member (RM-2), measured here and sent to the seater, which decides.

The size estimate is P-5's over the messages (2,500 per image included), plus the JSON of every tool call
in them and of the tool definitions (compact, as the caller sends them on): an agent's tools and calls take
room in a member's window too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import to_json

from services.gateway.panel.flatten import Flat, estimate_text, flatten
from shared.commands import TurnNeeds


def request_estimate(
    messages: Sequence[dict[str, Any]], route_fields: Mapping[str, Any], flat: Flat | None = None
) -> int:
    """`flat`: the messages already flattened (an agent's history is long: flattened once a turn)."""
    if flat is None:
        flat = flatten(list(messages))
    text = f"{flat.system}\n\n{flat.prompt}" if flat.system else flat.prompt
    calls = [call for m in messages for call in (m.get("tool_calls") or [])]
    tools = route_fields.get("tools") or []
    extra = (to_json(calls).decode() if calls else "") + (to_json(tools).decode() if tools else "")
    return estimate_text(text) + estimate_text(extra) + 2_500 * flat.images


def turn_needs(messages: Sequence[dict[str, Any]], route_fields: Mapping[str, Any]) -> TurnNeeds:
    """Tools when it offers any or carries tool calls or results; its images; its estimate."""
    has_tools = bool(route_fields.get("tools")) or any(
        m.get("role") == "tool" or m.get("tool_calls") for m in messages)
    flat = flatten(list(messages))
    estimate = request_estimate(messages, route_fields, flat)
    return TurnNeeds(tools=has_tools, images=flat.images, estimate=estimate)

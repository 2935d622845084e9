"""The OpenAI chat request a route-mode member is sent (RM-5).

The request's messages go as translated; every other field the format translated to OpenAI (tools,
tool_choice, parallel_tool_calls, response_format, sampling, stop, seed…) goes too, winning over the model's
own options. An output budget above the model's known maximum is cut to it (Claude Code asks every model
for 32,000), not refused. Fields the member cannot use are dropped, not refused: anything that is not a
chat-completions field this gateway relays, and tool settings without tools. The member always streams,
with a usage chunk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.gateway.formats.openai_chat import PASSED_ON

OUTPUT_BUDGETS = ("max_tokens", "max_completion_tokens")
NEED_TOOLS = ("tool_choice", "parallel_tool_calls")  # providers refuse these without tools


def upstream_options(
    route_fields: Mapping[str, Any],
    model_options: Mapping[str, Any] | None = None,
    max_output: int | None = None,
) -> dict[str, Any]:
    """The body fields besides model, messages and streaming (the caller's `SeatCall.options`).

    `route_fields` are the request's fields in OpenAI shape (`Ask.route_fields`); `model_options` the
    member's own call options; `max_output` its known output maximum."""
    own = {k: v for k, v in (model_options or {}).items() if k in PASSED_ON}
    asked = {k: v for k, v in route_fields.items() if k in PASSED_ON and v is not None}
    if any(k in asked for k in OUTPUT_BUDGETS):  # the request's budget replaces the model's, whichever name
        own = {k: v for k, v in own.items() if k not in OUTPUT_BUDGETS}
    options = {**own, **asked}
    if not options.get("tools"):
        for name in ("tools", *NEED_TOOLS):
            options.pop(name, None)
    for name in OUTPUT_BUDGETS:
        budget = options.get(name)
        if max_output and isinstance(budget, int) and budget > max_output:
            options[name] = max_output
    return options


def upstream_body(
    served: str,
    messages: Sequence[dict[str, Any]],
    route_fields: Mapping[str, Any],
    model_options: Mapping[str, Any] | None = None,
    max_output: int | None = None,
) -> dict[str, Any]:
    """The whole chat-completions body for one member: its served id, the messages, the options, and always
    `stream: true` with `stream_options.include_usage`."""
    return {
        "model": served, "messages": list(messages),
        **upstream_options(route_fields, model_options, max_output),
        "stream": True, "stream_options": {"include_usage": True},
    }

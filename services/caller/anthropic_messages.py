"""Anthropic's native Messages API (C-3 `anthropic`): the request we send and how its stream becomes an
outcome. Pure."""

from __future__ import annotations

import json
from typing import Any

from services.caller.chat_parts import (
    Image,
    alternating,
    arguments_object,
    forced_tool,
    function_tools,
    pieces_of,
    system_text,
    text_of_parts,
    tool_call_id,
    tool_calls_of,
    turns,
)
from services.caller.outcome import CallOutcome, ToolCall, Usage
from services.caller.stream_fold import StreamFold, ToolPieces, reply_object
from services.caller.wire import (
    UpstreamRequest,
    auth_headers,
    base_headers,
    chat_options,
    endpoint_url,
    error_object_text,
    output_budget,
    stop_list,
)
from shared.commands import Msg, SeatCall

VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
PASSED = ("temperature", "top_p", "top_k", "thinking", "metadata")
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
          "tool_use": "tool_calls", "refusal": "content_filter"}
CHOICES = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}


def build_request(call: SeatCall, key: str | None) -> UpstreamRequest:
    headers = base_headers(call.headers)
    headers.setdefault("anthropic-version", VERSION)
    headers.update(auth_headers("anthropic", key))
    body: dict[str, Any] = {
        "model": call.served,
        "max_tokens": output_budget(call.options) or DEFAULT_MAX_TOKENS,
        "messages": messages_of(call.messages),
        "stream": True,
    }
    system = system_text(call.messages)
    if system:
        body["system"] = system
    body.update(chat_options(call, PASSED))
    stops = stop_list(call.options.get("stop"))
    if stops:
        body["stop_sequences"] = stops
    body.update(tools_of(call.options))
    return UpstreamRequest(url=endpoint_url(call.base, "messages"), headers=headers, body=body)


def tools_of(options: dict[str, Any]) -> dict[str, Any]:
    tools = [{"name": f["name"], "description": f.get("description", ""),
              "input_schema": f.get("parameters") or {"type": "object", "properties": {}}}
             for f in function_tools(options)]
    if not tools:
        return {}
    choice = options.get("tool_choice")
    named = forced_tool(choice)
    if named:
        return {"tools": tools, "tool_choice": {"type": "tool", "name": named}}
    if isinstance(choice, str) and choice in CHOICES:
        return {"tools": tools, "tool_choice": CHOICES[choice]}
    return {"tools": tools}


def image_block(image: Image) -> dict[str, Any]:
    source = ({"type": "base64", "media_type": image.media_type, "data": image.data} if image.data
              else {"type": "url", "url": image.url})
    return {"type": "image", "source": source}


def blocks_of(message: Msg) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": tool_call_id(message),
                 "content": text_of_parts(message.content)}]
    blocks = [image_block(piece) if isinstance(piece, Image) else {"type": "text", "text": piece}
              for piece in pieces_of(message.content)]
    for asked in tool_calls_of(message):
        blocks.append({"type": "tool_use", "id": asked.id, "name": asked.name,
                       "input": arguments_object(asked.arguments)})
    return blocks


def messages_of(messages: list[Msg]) -> list[dict[str, Any]]:
    """User and assistant turns; tool results ride in a user turn; neighbours of one role are merged."""
    return alternating((("assistant" if m.role == "assistant" else "user", blocks_of(m))
                        for m in turns(messages)), "content")


def usage_of(raw: dict[str, Any]) -> Usage:
    """Anthropic counts cached prompt tokens apart from `input_tokens`; ours is the whole prompt."""
    cached = int(raw.get("cache_read_input_tokens") or 0)
    written = int(raw.get("cache_creation_input_tokens") or 0)
    return Usage(tokens_in=int(raw.get("input_tokens") or 0) + cached + written,
                 tokens_out=int(raw.get("output_tokens") or 0), cached=cached)


class StreamParser(StreamFold):
    """message_start → content_block_start/delta/stop … → message_delta (usage, stop) → message_stop."""

    def __init__(self) -> None:
        super().__init__()
        self._tools: ToolPieces[int] = ToolPieces()
        self._usage = Usage()

    def _fold(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "error" or event.get("error"):
            self.outcome.error = error_object_text(event.get("error") or event, "mid-stream")
        elif kind == "message_start":
            message = event.get("message") or {}
            self.outcome.model = str(message.get("model") or "")
            self._usage = usage_of(message.get("usage") or {})
        elif kind == "content_block_start":
            self._start_block(int(event.get("index", 0)), event.get("content_block") or {})
        elif kind == "content_block_delta":
            self._delta(int(event.get("index", 0)), event.get("delta") or {})
        elif kind == "message_delta":
            stop = (event.get("delta") or {}).get("stop_reason")
            if stop:
                self.outcome.finish = FINISH.get(stop, stop)
            produced = (event.get("usage") or {}).get("output_tokens")
            if produced is not None:
                self._usage.tokens_out = int(produced)
        elif kind == "message_stop":
            self.done = True

    def _start_block(self, index: int, block: dict[str, Any]) -> None:
        if block.get("type") == "tool_use":
            self._tools.calls[index] = ToolCall(id=str(block.get("id", "")), name=str(block.get("name", "")))
            preset = block.get("input")
            self._tools.args[index] = [json.dumps(preset)] if preset else []
        elif block.get("type") == "text" and block.get("text"):
            self._text.append(block["text"])

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            self._text.append(str(delta.get("text", "")))
        elif kind == "thinking_delta":
            self._reasoning.append(str(delta.get("thinking", "")))
        elif kind == "input_json_delta":
            self._tools.args.setdefault(index, []).append(str(delta.get("partial_json", "")))

    def finish(self) -> CallOutcome:
        self.outcome.tool_calls += self._tools.whole(sorted(self._tools.calls))
        if self._usage.tokens_in or self._usage.tokens_out:
            self.outcome.usage = self._usage
        return self._whole(self.done, "message_stop")


def parse_plain(raw: bytes) -> CallOutcome:
    """A non-streamed Messages reply (or an error object sent with 200)."""
    data, failed = reply_object(raw)
    if failed is not None:
        return failed
    if data.get("type") == "error" or data.get("error"):
        return CallOutcome(error=error_object_text(data.get("error") or data, "in a 200 reply"))
    out = CallOutcome(model=str(data.get("model") or ""), usage=usage_of(data.get("usage") or {}))
    stop = data.get("stop_reason")
    out.finish = FINISH.get(stop, stop) if isinstance(stop, str) else None
    for block in data.get("content") or []:
        if block.get("type") == "text":
            out.text += str(block.get("text", ""))
        elif block.get("type") == "thinking":
            out.reasoning += str(block.get("thinking", ""))
        elif block.get("type") == "tool_use":
            out.tool_calls.append(ToolCall(id=str(block.get("id", "")), name=str(block.get("name", "")),
                                           arguments=json.dumps(block.get("input") or {})))
    return out

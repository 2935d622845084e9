"""Anthropic Messages in route mode (RM-7, A-51).

message_start; the member's text as one text block while it arrives; at the end each tool call as a
`tool_use` block (input `{}`) with ONE `input_json_delta` holding the whole arguments JSON, so calls whose
deltas interleaved upstream arrive intact; a turn with neither text nor calls still has an (empty) text
block. message_delta carries the stop reason (end_turn, max_tokens, tool_use), the member's own counts
(estimates when it gave none) and `bench`; then message_stop.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from services.gateway.formats.anthropic import error_body, message
from services.gateway.formats.canonical import sse_event
from services.gateway.route_mode.assemble import Chunk, TurnSummary, delta_of, text_of
from services.gateway.route_mode.encoders.base import RouteContext, RouteEncoder


def stop_reason(summary: TurnSummary) -> str:
    if summary.cut:
        return "max_tokens"
    return "tool_use" if summary.tool_calls else "end_turn"


def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


class MessageRelay(RouteEncoder):
    def __init__(self, context: RouteContext) -> None:
        super().__init__(context)
        self.blocks = 0  # content blocks opened so far
        self.text_open = False

    def block(self, content_block: dict[str, Any], deltas: Sequence[dict[str, Any]] = ()) -> bytes:
        """One whole content block after the text one: start, its deltas, stop."""
        index = self.blocks
        self.blocks += 1
        out = sse_event("content_block_start", {
            "type": "content_block_start", "index": index, "content_block": content_block})
        for delta in deltas:
            out += sse_event("content_block_delta", {
                "type": "content_block_delta", "index": index, "delta": delta})
        return out + sse_event("content_block_stop", {"type": "content_block_stop", "index": index})

    def start(self) -> bytes:
        usage = {"input_tokens": self.context.input_estimate, "output_tokens": 0}
        opened = message(self.context.model, [], None, usage)
        return sse_event("message_start", {"type": "message_start", "message": opened})

    def chunk(self, chunk: Chunk) -> bytes:
        text = text_of(delta_of(chunk))
        if not text:
            return b""
        out = b""
        if not self.text_open:
            self.text_open = True
            self.blocks += 1
            out = sse_event("content_block_start", {
                "type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        return out + sse_event("content_block_delta", {
            "type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})

    def keepalive(self) -> bytes:
        return sse_event("ping", {"type": "ping"})

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        out = b""
        if self.text_open:
            out += sse_event("content_block_stop", {"type": "content_block_stop", "index": 0})
        elif not summary.tool_calls:
            out += self.block({"type": "text", "text": ""})
        for call in summary.tool_calls:
            whole = json.dumps(call.arguments_object(), ensure_ascii=False)
            delta = {"type": "input_json_delta", "partial_json": whole}
            out += self.block(tool_use(call.id, call.name, {}), [delta])
        tokens_in, tokens_out = self.counts(summary)
        return out + sse_event("message_delta", {
            "type": "message_delta", "delta": {"stop_reason": stop_reason(summary), "stop_sequence": None},
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}, "bench": bench,
        }) + sse_event("message_stop", {"type": "message_stop"})

    def error(self, status: int, message: str) -> bytes:
        return sse_event("error", error_body(status, message))

    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if summary.text or not summary.tool_calls:
            content.append({"type": "text", "text": summary.text})
        content += [tool_use(c.id, c.name, c.arguments_object()) for c in summary.tool_calls]
        tokens_in, tokens_out = self.counts(summary)
        usage = {"input_tokens": tokens_in, "output_tokens": tokens_out}
        return {**message(self.context.model, content, stop_reason(summary), usage), "bench": bench}

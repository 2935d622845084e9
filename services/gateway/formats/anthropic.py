"""Anthropic Messages (`POST /v1/messages`): H-G5, S-3, S-5, S-6, H-1.

`POST /v1/messages/count_tokens` (H-G6) answers the P-5 estimate without a model call. The panel's reply is
one text block. Streamed: message_start (input estimate), one text block fed by
text_delta pieces, message_delta (stop reason, output estimate, `bench`), message_stop; `event: ping` while
seats think; `event: error` when the panel fails after the 200. The request side lives in
`anthropic_request`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from services.gateway.ask import Ask
from services.gateway.formats.anthropic_request import request_messages, route_fields
from services.gateway.formats.base import Answer, ExtraRoute, Format, Lookup, Reply, StreamEncoder
from services.gateway.formats.canonical import sse_event, translated_ask
from services.gateway.formats.route_encoder import RouteContext, RouteEncoder
from services.gateway.formats.token_count import anthropic_count
from services.gateway.panel.flatten import estimate_text
from services.gateway.route_mode.assemble import Chunk, TurnSummary, delta_of, text_of

ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


def message_id() -> str:
    return f"msg_{secrets.token_hex(12)}"


def message(
    model: str, content: list[dict[str, Any]], stop: str | None, usage: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": message_id(), "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop, "stop_sequence": None, "usage": usage,
    }


class Anthropic(Format):
    name = "anthropic"
    routes = ("/v1/messages",)

    def parse(self, body: dict[str, Any], params: Mapping[str, str]) -> Ask:
        return translated_ask(self.name, body, request_messages, route_fields)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error_body(status, message)

    def reply(self, ask: Ask, answer: Answer) -> Reply:
        usage = {"input_tokens": ask.estimate, "output_tokens": estimate_text(answer.content)}
        body = message(ask.asked_model, [{"type": "text", "text": answer.content}], "end_turn", usage)
        return Reply(body={**body, "bench": answer.bench})

    def encoder(self, ask: Ask, collection: str) -> StreamEncoder:
        return MessageEvents(ask.asked_model, ask.estimate)

    def extra_routes(self) -> list[ExtraRoute]:
        return [ExtraRoute("POST", "/v1/messages/count_tokens", count_tokens)]

    def route_encoder(self, context: RouteContext) -> RouteEncoder:
        return MessageRouteEncoder(context)

def count_tokens(lookup: Lookup) -> dict[str, int]:
    """H-G6: no collection check, no model call."""
    return anthropic_count(lookup.body)


class MessageEvents(StreamEncoder):
    """S-5 Anthropic: one text block between message_start and message_stop; `bench` on message_delta."""

    def __init__(self, model: str, input_tokens: int) -> None:
        self.model = model
        self.input_tokens = input_tokens
        self.text = ""

    def start(self) -> bytes:
        usage = {"input_tokens": self.input_tokens, "output_tokens": 0}
        opened = message(self.model, [], None, usage)
        return (
            sse_event("message_start", {"type": "message_start", "message": opened})
            + sse_event("content_block_start", {
                "type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""},
            })
        )

    def piece(self, text: str) -> bytes:
        self.text += text
        return sse_event("content_block_delta", {
            "type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text},
        })

    def keepalive(self) -> bytes:
        return sse_event("ping", {"type": "ping"})

    def finish(self, bench: dict[str, Any]) -> bytes:
        return (
            sse_event("content_block_stop", {"type": "content_block_stop", "index": 0})
            + sse_event("message_delta", {
                "type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": estimate_text(self.text)}, "bench": bench,
            })
            + sse_event("message_stop", {"type": "message_stop"})
        )

    def error(self, status: int, message: str) -> bytes:
        return sse_event("error", error_body(status, message))


# ---------------------------------------------------------------- route mode
# Anthropic Messages in route mode (RM-7, A-51).
#
# message_start; the member's text as one text block while it arrives; at the end each tool call as a
# `tool_use` block (input `{}`) with ONE `input_json_delta` holding the whole arguments JSON, so calls whose
# deltas interleaved upstream arrive intact; a turn with neither text nor calls still has an (empty) text
# block. message_delta carries the stop reason (end_turn, max_tokens, tool_use), the member's own counts
# (estimates when it gave none) and `bench`; then message_stop.


def stop_reason(summary: TurnSummary) -> str:
    if summary.cut:
        return "max_tokens"
    return "tool_use" if summary.tool_calls else "end_turn"


def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


class MessageRouteEncoder(RouteEncoder):
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

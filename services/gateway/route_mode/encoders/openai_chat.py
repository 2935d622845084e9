"""OpenAI chat completions in route mode (RM-7): the member's chunks relayed as received.

Each chunk is re-stamped (`object: chat.completion.chunk`, `model: bench/<c>`, `created` kept or set) and
otherwise passed on untouched, tool-call deltas included, so an OpenAI client sees the member's own
stream. No gateway role chunk; the stream closes with a chunk that has no choice and carries `bench`, then
`[DONE]`. The member's usage rides on that closing chunk (its own usage-only chunk is folded into it):
clients, the OpenAI SDK among them, take usage from the last chunk that has a `usage` field. Not streamed:
one `chat.completion` with the tool calls assembled and the member's usage.
"""

from __future__ import annotations

import time
from typing import Any

from services.gateway.formats.common import sse
from services.gateway.formats.openai_chat import completion_id, error_body
from services.gateway.route_mode.assemble import Chunk, TurnSummary
from services.gateway.route_mode.encoders.base import RouteContext, RouteEncoder

DONE = b"data: [DONE]\n\n"


def chat_tool_calls(summary: TurnSummary) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in summary.tool_calls]


class ChatRelay(RouteEncoder):
    def __init__(self, context: RouteContext) -> None:
        super().__init__(context)
        self.created = int(time.time())
        self.id = ""  # the member's chunk id, which the closing chunk shares
        self.usage: dict[str, Any] | None = None  # the member's latest usage, for the closing chunk

    def start(self) -> bytes:
        return b""

    def chunk(self, chunk: Chunk) -> bytes:
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
            if not chunk.get("choices"):
                return b""  # a usage-only chunk: its usage closes the stream
        out = {**chunk, "object": "chat.completion.chunk", "model": self.context.collection}
        if isinstance(out.get("created"), int):
            self.created = out["created"]
        else:
            out["created"] = self.created
        if isinstance(out.get("id"), str) and out["id"]:
            self.id = out["id"]
        return sse(out)

    def keepalive(self) -> bytes:
        return b": keep-alive\n\n"

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        closing = {
            "id": self.id or summary.response_id or completion_id(), "object": "chat.completion.chunk",
            "created": self.created, "model": self.context.collection, "choices": [],
            **({"usage": self.usage} if self.usage is not None else {}), "bench": bench,
        }
        return sse(closing) + DONE

    def error(self, status: int, message: str) -> bytes:
        return sse(error_body(status, message)) + DONE

    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> dict[str, Any]:
        calls = chat_tool_calls(summary)
        message: dict[str, Any] = {"role": "assistant", "content": summary.text if summary.text or not calls
                                   else None}
        if calls:
            message["tool_calls"] = calls
        if summary.reasoning:
            message["reasoning_content"] = summary.reasoning
        tokens_in, tokens_out = self.counts(summary)
        usage: dict[str, Any] = {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                                 "total_tokens": tokens_in + tokens_out}
        if summary.usage and summary.usage.reasoning:
            usage["completion_tokens_details"] = {"reasoning_tokens": summary.usage.reasoning}
        return {
            "id": completion_id(), "object": "chat.completion", "created": int(time.time()),
            "model": self.context.collection,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if calls else summary.finish_reason or "stop"}],
            "usage": usage, "bench": bench,
        }

"""Ollama `/api/chat` (and `/api/generate`) in route mode (RM-7).

NDJSON: a line per text piece; at the end one line carrying every tool call as
`message.tool_calls: [{function: {name, arguments: <object>}}]` (Ollama clients read arguments as an
object); then the done line with `done_reason` (`length` when the member was cut), real durations, the
member's counts and `bench`. `/api/generate` has no tools: its text goes in `response`.
"""

from __future__ import annotations

import time
from typing import Any

from services.gateway.formats.ollama import created_at, error_body, line
from services.gateway.route_mode.assemble import Chunk, TurnSummary, delta_of, text_of
from services.gateway.route_mode.encoders.base import RouteContext, RouteEncoder


def ollama_tool_calls(summary: TurnSummary) -> list[dict[str, Any]]:
    return [{"function": {"name": c.name, "arguments": c.arguments_object()}} for c in summary.tool_calls]


class OllamaRelay(RouteEncoder):
    media_type = "application/x-ndjson"

    def __init__(self, context: RouteContext, key: str = "message") -> None:
        super().__init__(context)
        self.key = key  # `message` (chat) or `response` (generate)

    def text(self, text: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        if self.key != "message":
            return {"response": text}
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        return {"message": message}

    def head(self) -> dict[str, Any]:
        return {"model": self.context.model, "created_at": created_at()}

    def done(self, summary: TurnSummary) -> dict[str, Any]:
        elapsed = time.monotonic_ns() - self.context.received_ns if self.context.received_ns else 0
        tokens_in, tokens_out = self.counts(summary)
        return {
            "done": True, "done_reason": "length" if summary.cut else "stop", "total_duration": elapsed,
            "load_duration": 0, "prompt_eval_count": tokens_in, "prompt_eval_duration": 0,
            "eval_count": tokens_out, "eval_duration": elapsed,
        }

    def start(self) -> bytes:
        return b""

    def chunk(self, chunk: Chunk) -> bytes:
        text = text_of(delta_of(chunk))
        return line({**self.head(), **self.text(text), "done": False}) if text else b""

    def keepalive(self) -> bytes:
        return line({**self.head(), **self.text(""), "done": False})

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        calls = ollama_tool_calls(summary)
        out = b""
        if calls and self.key == "message":
            out = line({**self.head(), **self.text("", calls), "done": False})
        return out + line({**self.head(), **self.text(""), **self.done(summary), "bench": bench})

    def error(self, status: int, message: str) -> bytes:
        return line(error_body(status, message))

    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> dict[str, Any]:
        calls = ollama_tool_calls(summary)
        return {**self.head(), **self.text(summary.text, calls), **self.done(summary), "bench": bench}

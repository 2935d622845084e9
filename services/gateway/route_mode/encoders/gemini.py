"""Gemini `generateContent` / `streamGenerateContent` in route mode (RM-7).

Text chunks as they come; the last chunk's parts are a `functionCall` {id, name, args} per tool call (the
id comes back on the client's `functionResponse`, so results match their calls), with `finishReason`
MAX_TOKENS when the member stopped for length, else STOP, and the member's counts. Gemini bodies have no
room for `bench`: the headers name the conversation and the model. SSE with `alt=sse`, otherwise one JSON
array written element by element.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from services.gateway.formats.common import sse
from services.gateway.formats.gemini import error_body
from services.gateway.route_mode.assemble import Chunk, TurnSummary, delta_of, text_of
from services.gateway.route_mode.encoders.base import RouteContext, RouteEncoder


def finish_reason(summary: TurnSummary) -> str:
    return "MAX_TOKENS" if summary.cut else "STOP"


def parts(summary: TurnSummary, text: str) -> list[dict[str, Any]]:
    calls = [{"functionCall": {"id": c.id, "name": c.name, "args": c.arguments_object()}}
             for c in summary.tool_calls]
    return ([{"text": text}] if text or not calls else []) + calls


class GeminiRelay(RouteEncoder):
    def __init__(self, context: RouteContext) -> None:
        super().__init__(context)
        self.media_type = "text/event-stream" if context.event_stream else "application/json"
        self.response_id = secrets.token_urlsafe(16)
        self.elements = 0

    def payload(self, content_parts: list[dict[str, Any]], **rest: Any) -> dict[str, Any]:
        candidate = {"content": {"role": "model", "parts": content_parts}, "index": 0}
        return {"candidates": [{**candidate, **rest}], "modelVersion": self.context.model,
                "responseId": self.response_id}

    def usage(self, summary: TurnSummary) -> dict[str, int]:
        tokens_in, tokens_out = self.counts(summary)
        usage = {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out,
                 "totalTokenCount": tokens_in + tokens_out}
        if summary.usage and summary.usage.reasoning:
            usage["thoughtsTokenCount"] = summary.usage.reasoning
        return usage

    def element(self, payload: dict[str, Any]) -> bytes:
        if self.context.event_stream:
            return sse(payload)
        out = (b",\r\n" if self.elements else b"") + json.dumps(payload, ensure_ascii=False).encode()
        self.elements += 1
        return out

    def end(self) -> bytes:
        return b"" if self.context.event_stream else b"]"

    def start(self) -> bytes:
        return b"" if self.context.event_stream else b"["

    def chunk(self, chunk: Chunk) -> bytes:
        text = text_of(delta_of(chunk))
        return self.element(self.payload([{"text": text}])) if text else b""

    def keepalive(self) -> bytes:
        return self.element(self.payload([{"text": ""}]))

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        last = self.payload(parts(summary, ""), finishReason=finish_reason(summary))
        return self.element({**last, "usageMetadata": self.usage(summary)}) + self.end()

    def error(self, status: int, message: str) -> bytes:
        return self.element(error_body(status, message)) + self.end()

    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> dict[str, Any]:
        whole = self.payload(parts(summary, summary.text), finishReason=finish_reason(summary))
        return {**whole, "usageMetadata": self.usage(summary)}

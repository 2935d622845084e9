"""OpenAI legacy completions in route mode: text only (the format has no tools), the member's text as it
comes, the finish reason and usage it gave, `bench` on the last chunk."""

from __future__ import annotations

import time
from typing import Any

from services.gateway.formats.common import sse
from services.gateway.formats.completions import completion_id
from services.gateway.formats.openai_chat import error_body
from services.gateway.route_mode.assemble import Chunk, TurnSummary, delta_of, text_of
from services.gateway.route_mode.encoders.base import RouteContext, RouteEncoder

DONE = b"data: [DONE]\n\n"


class CompletionRelay(RouteEncoder):
    def __init__(self, context: RouteContext) -> None:
        super().__init__(context)
        self.id = completion_id()
        self.created = int(time.time())

    def choice(self, text: str, finish: str | None, **extra: Any) -> dict[str, Any]:
        return {
            "id": self.id, "object": "text_completion", "created": self.created, "model": self.context.model,
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}], **extra,
        }

    def usage(self, summary: TurnSummary) -> dict[str, int]:
        tokens_in, tokens_out = self.counts(summary)
        total = tokens_in + tokens_out
        return {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": total}

    def start(self) -> bytes:
        return b""

    def chunk(self, chunk: Chunk) -> bytes:
        text = text_of(delta_of(chunk))
        return sse(self.choice(text, None)) if text else b""

    def keepalive(self) -> bytes:
        return b": keep-alive\n\n"

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        last = self.choice("", summary.finish_reason or "stop", usage=self.usage(summary), bench=bench)
        return sse(last) + DONE

    def error(self, status: int, message: str) -> bytes:
        return sse(error_body(status, message)) + DONE

    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> dict[str, Any]:
        return {**self.choice(summary.text, summary.finish_reason or "stop"), "usage": self.usage(summary),
                "bench": bench}

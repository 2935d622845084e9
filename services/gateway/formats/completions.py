"""OpenAI legacy completions (`POST /v1/completions`): H-G3, S-5, X-3, X-4.

One prompt becomes one user message. Several prompts or token ids are refused: a panel answers one
question. Sampling options are read past (X-4); route mode would pass them on as chat fields.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any

from services.gateway.ask import Ask, make_ask
from services.gateway.formats.base import Answer, Format, Reply, StreamEncoder
from services.gateway.formats.canonical import copy_fields, stream_flag
from services.gateway.formats.common import bench_fields, model_field, sse
from services.gateway.formats.openai_chat import error_body
from services.gateway.formats.route_encoder import RouteContext, RouteEncoder
from services.gateway.panel.flatten import estimate_text
from services.gateway.route_mode.assemble import Chunk, TurnSummary, delta_of, text_of
from shared.refusal import Refusal

SAMPLING = {"max_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p", "stop": "stop"}
ONE_PROMPT = (
    '"prompt" must be one string (a panel answers one prompt; a list of several, or token ids, is not served)'
)


def completion_id() -> str:
    return f"cmpl-{secrets.token_hex(12)}"


def prompt_text(prompt: Any) -> str:
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise Refusal(400, ONE_PROMPT)
    return prompt


def usage(prompt_tokens: int, text: str) -> dict[str, int]:
    """P-5 estimates: nothing upstream counted this reply as one."""
    completion_tokens = estimate_text(text)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


class Completions(Format):
    name = "completions"
    routes = ("/v1/completions", "/completions")

    def parse(self, body: dict[str, Any], params: Mapping[str, str]) -> Ask:
        model = model_field(body)
        nominees, reply = bench_fields(body)
        text = prompt_text(body.get("prompt"))
        return make_ask(
            self.name, model, [{"role": "user", "content": text}], with_=nominees, reply=reply,
            stream=stream_flag(body), route_fields=copy_fields(body, SAMPLING),
        )

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error_body(status, message)

    def reply(self, ask: Ask, answer: Answer) -> Reply:
        return Reply(body={
            "id": completion_id(),
            "object": "text_completion",
            "created": int(time.time()),
            "model": ask.asked_model,
            "choices": [{"text": answer.content, "index": 0, "logprobs": None, "finish_reason": "stop"}],
            "usage": usage(ask.estimate, answer.content),
            "bench": answer.bench,
        })

    def encoder(self, ask: Ask, collection: str) -> StreamEncoder:
        return CompletionChunks(ask.asked_model)

    def route_encoder(self, context: RouteContext) -> RouteEncoder:
        return CompletionRouteEncoder(context)

class CompletionChunks(StreamEncoder):
    """S-5 completions: no role chunk; `text` chunks; a final empty chunk with `finish_reason` and `bench`."""

    def __init__(self, model: str) -> None:
        self.id = completion_id()
        self.created = int(time.time())
        self.model = model

    def chunk(self, text: str, finish: str | None = None, **extra: Any) -> bytes:
        return sse({
            "id": self.id, "object": "text_completion", "created": self.created, "model": self.model,
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}], **extra,
        })

    def start(self) -> bytes:
        return b""

    def piece(self, text: str) -> bytes:
        return self.chunk(text)

    def keepalive(self) -> bytes:
        return b": keep-alive\n\n"

    def finish(self, bench: dict[str, Any]) -> bytes:
        return self.chunk("", "stop", bench=bench) + b"data: [DONE]\n\n"

    def error(self, status: int, message: str) -> bytes:
        return sse(error_body(status, message)) + b"data: [DONE]\n\n"


# ---------------------------------------------------------------- route mode
# OpenAI legacy completions in route mode: text only (the format has no tools), the member's text as it
# comes, the finish reason and usage it gave, `bench` on the last chunk.


DONE = b"data: [DONE]\n\n"


class CompletionRouteEncoder(RouteEncoder):
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

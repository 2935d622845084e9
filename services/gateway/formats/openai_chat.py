"""OpenAI chat completions (`POST /v1/chat/completions`): H-G2, S-5, X-1, X-3, X-4.

The request's messages already are the canonical shape; this module checks them (legacy functions, roles,
part shapes, image URLs), notes what makes a request an agent's turn, and renders the panel as a
`chat.completion` or a stream of `chat.completion.chunk`s. Sampling options (`max_tokens`, `temperature`,
`top_p`, `stop`…) and `stream_options` are read past: each seat keeps its own options (X-4).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

from services.gateway.ask import Ask, make_ask
from services.gateway.formats.base import Answer, Format, Reply, StreamEncoder
from services.gateway.formats.common import bench_fields, check_image_url, model_field, object_list, sse
from services.gateway.formats.route_encoder import RouteContext, RouteEncoder
from services.gateway.route_mode.assemble import Chunk, TurnSummary
from shared.refusal import Refusal

ROLES = ("system", "developer", "user", "assistant", "tool")
FOREIGN_IMAGE_PARTS = ("image", "input_image")
NOT_PARTS = "content must be a string or a list of content part objects"
# Chat-completions fields passed on to the member. The rest are dropped: ours (`model`, `messages`,
# `stream`, `with`, `bench`…), several choices (`n`: one answer is relayed), and what the relay does not
# carry back or what belongs to the client's own provider account (audio, stored completions, metadata,
# service tier, hosted web search, predicted outputs, end-user ids).
PASSED_ON = (
    "tools", "tool_choice", "parallel_tool_calls", "response_format", "temperature", "top_p", "stop", "seed",
    "max_tokens", "max_completion_tokens", "frequency_penalty", "presence_penalty", "logit_bias", "logprobs",
    "top_logprobs", "reasoning_effort",
)
LEGACY_TOOLS = "the legacy \"functions\"/\"function_call\" form is not supported: send \"tools\" instead"


def completion_id() -> str:
    return f"chatcmpl-{secrets.token_hex(12)}"


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "bench_gateway", "code": status}}


def check_parts(index: int, content: list[Any]) -> None:
    for part in content:
        if not isinstance(part, dict):
            raise Refusal(400, f"messages[{index}].{NOT_PARTS}")
        kind = part.get("type")
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise Refusal(400, f'messages[{index}]: a "text" part needs a "text" string')
        elif kind == "image_url":
            value = part.get("image_url")
            check_image_url(value.get("url") if isinstance(value, dict) else value)
        elif kind in FOREIGN_IMAGE_PARTS:
            raise Refusal(
                400,
                f'messages[{index}]: a "{kind}" part is another API\'s image shape; on chat completions send '
                '{"type": "image_url", "image_url": {"url": "https://… or data:image/…;base64,…"}}',
            )
        else:
            raise Refusal(
                400,
                f"messages[{index}]: content parts of type {json.dumps(kind)} are not supported "
                "(text and image_url are)",
            )


def check_messages(raw: Any) -> tuple[list[dict[str, Any]], str]:
    """The messages as sent, checked; and why they make an agent's turn ("" when they do not)."""
    raw = object_list(raw, "messages", "a list of message objects")
    agentic = ""
    for index, msg in enumerate(raw):
        role = msg.get("role")
        if role == "function":
            raise Refusal(400, f"messages[{index}] has role function: {LEGACY_TOOLS}")
        if role not in ROLES:
            allowed = ", ".join(ROLES)
            raise Refusal(400, f"messages[{index}].role must be one of {allowed} (got {json.dumps(role)})")
        content = msg.get("content")
        if isinstance(content, list):
            check_parts(index, content)
        elif content is not None and not isinstance(content, str):
            raise Refusal(400, f"messages[{index}].{NOT_PARTS}")
        if role == "tool" and not agentic:
            agentic = "tool results (a message with role tool)"
        if msg.get("tool_calls") and not agentic:
            agentic = "tool calls (a message with tool_calls)"
    return [dict(m) for m in raw], agentic


class OpenAIChat(Format):
    name = "openai_chat"
    routes = ("/v1/chat/completions", "/chat/completions")

    def parse(self, body: dict[str, Any], params: Mapping[str, str]) -> Ask:
        model = model_field(body)
        nominees, reply = bench_fields(body)
        if body.get("functions") is not None or body.get("function_call") is not None:
            raise Refusal(400, LEGACY_TOOLS)
        tools = body.get("tools")
        if tools is not None and not isinstance(tools, list):
            raise Refusal(400, '"tools" must be a list')
        messages, agentic = check_messages(body.get("messages"))
        if tools:
            agentic = "tools"
        stream = body.get("stream")
        if stream is not None and not isinstance(stream, bool):
            raise Refusal(400, '"stream" must be true or false')
        return make_ask(self.name, model, messages, with_=nominees, reply=reply, stream=bool(stream),
                        agentic=agentic, route_fields={k: v for k, v in body.items() if k in PASSED_ON})

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error_body(status, message)

    def reply(self, ask: Ask, answer: Answer) -> Reply:
        return Reply(body={
            "id": completion_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": answer.collection,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer.content}}],
            "bench": answer.bench,
        })

    def encoder(self, ask: Ask, collection: str) -> StreamEncoder:
        return ChatChunks(collection)

    def route_encoder(self, context: RouteContext) -> RouteEncoder:
        return ChatRouteEncoder(context)

class ChatChunks(StreamEncoder):
    """S-5 OpenAI chat: role chunk, content chunks, a final chunk with `finish_reason` and `bench`, [DONE]."""

    def __init__(self, model: str) -> None:
        self.id = completion_id()
        self.created = int(time.time())
        self.model = model

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return sse({
            "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra,
        })

    def start(self) -> bytes:
        return self.chunk({"role": "assistant", "content": ""})

    def piece(self, text: str) -> bytes:
        return self.chunk({"content": text})

    def keepalive(self) -> bytes:
        return b": keep-alive\n\n"

    def finish(self, bench: dict[str, Any]) -> bytes:
        return self.chunk({}, "stop", bench=bench) + b"data: [DONE]\n\n"

    def error(self, status: int, message: str) -> bytes:
        return sse(error_body(status, message)) + b"data: [DONE]\n\n"


# ---------------------------------------------------------------- route mode
# OpenAI chat completions in route mode (RM-7): the member's chunks relayed as received.
#
# Each chunk is re-stamped (`object: chat.completion.chunk`, `model: bench/<c>`, `created` kept or set) and
# otherwise passed on untouched, tool-call deltas included, so an OpenAI client sees the member's own
# stream. No gateway role chunk; the stream closes with a chunk that has no choice and carries `bench`, then
# `[DONE]`. The member's usage rides on that closing chunk (its own usage-only chunk is folded into it):
# clients, the OpenAI SDK among them, take usage from the last chunk that has a `usage` field. Not streamed:
# one `chat.completion` with the tool calls assembled and the member's usage.


DONE = b"data: [DONE]\n\n"


def chat_tool_calls(summary: TurnSummary) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in summary.tool_calls]


class ChatRouteEncoder(RouteEncoder):
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

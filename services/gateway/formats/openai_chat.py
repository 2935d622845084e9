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

from services.gateway.ask import Ask, Refusal, make_ask
from services.gateway.formats.base import Answer, Format, Reply, StreamEncoder
from services.gateway.formats.common import bench_fields, check_image_url, model_field, object_list, sse

ROLES = ("system", "developer", "user", "assistant", "tool")
FOREIGN_IMAGE_PARTS = ("image", "input_image")
NOT_PARTS = "content must be a string or a list of content part objects"
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
                        agentic=agentic)

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

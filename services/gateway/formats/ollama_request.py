"""Ollama `/api/chat` and `/api/generate` requests → canonical chat messages and route fields: H-G7, X-1..X-5.

Ollama sends images as bare base64, so their type is sniffed from the magic bytes to build a data URL.
Its tool calls carry no ids: they are numbered per request and each `tool` message is matched to the
oldest open call of its `tool_name` (RM-5).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from services.gateway.formats.canonical import (
    CallNumbers,
    Message,
    Part,
    collapse,
    copy_fields,
    data_url,
    image_part,
    text_part,
    tool_call,
    tool_message,
)
from services.gateway.formats.common import object_list
from shared.refusal import Refusal

ROLES = ("system", "user", "assistant", "tool")
OPTIONS = {"num_predict": "max_tokens", "temperature": "temperature", "top_p": "top_p", "stop": "stop"}
BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
MAGIC = (
    (b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"), (b"BM", "image/bmp"),
)
LATEST = ":latest"


def model_name(model: str) -> str:
    """H-G7: `bench/core:latest` is `bench/core`."""
    return model.removesuffix(LATEST)


def sniff(data: str) -> str:
    """The image type from the first bytes (PNG, JPEG, GIF, WEBP, BMP); PNG when none matches."""
    try:
        head = base64.b64decode(data[:16].replace("-", "+").replace("_", "/") + "==")
    except (binascii.Error, ValueError):
        return "image/png"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in MAGIC if head.startswith(magic)), "image/png")


def image_parts(where: str, images: Any) -> list[Part]:
    if images is None:
        return []
    if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
        raise Refusal(400, f'{where}: "images" must be a list of base64 strings')
    parts: list[Part] = []
    for index, data in enumerate(images):
        at = f"{where}.images[{index}]"
        if not BASE64.fullmatch(data):
            raise Refusal(400, f"{at} is not base64 image data (send the file's bytes base64-encoded)")
        parts.append(image_part(data_url(sniff(data), data, at)))
    return parts


def content_parts(where: str, content: Any, images: Any) -> list[Part]:
    if content is not None and not isinstance(content, str):
        raise Refusal(400, f'{where}: "content" must be a string')
    return ([text_part(content)] if content else []) + image_parts(where, images)


def chat_messages(raw: Any) -> tuple[list[Message], str]:
    """`/api/chat` messages → canonical messages, and why they make an agent's turn ("" when they do not)."""
    raw = object_list(raw, "messages", "a list of message objects")
    numbers = CallNumbers()
    messages: list[Message] = []
    agentic = ""
    for index, msg in enumerate(raw):
        where, role = f"messages[{index}]", msg.get("role")
        if role not in ROLES:
            raise Refusal(400, f"{where}.role must be one of {', '.join(ROLES)} (got {json.dumps(role)})")
        parts = content_parts(where, msg.get("content"), msg.get("images"))
        calls = msg.get("tool_calls")
        if calls and role != "assistant":
            raise Refusal(400, f"{where}: only assistant messages carry tool_calls (this one is {role})")
        if role == "tool":
            call_id = numbers.result(msg.get("tool_name") or msg.get("name"))
            texts = [p["text"] for p in parts if p["type"] == "text"]
            messages.append(tool_message(call_id, "\n\n".join(texts)))
            images = [p for p in parts if p["type"] != "text"]
            messages += [{"role": "user", "content": images}] if images else []
            agentic = agentic or "tool results (a message with role tool)"
            continue
        message: Message = {"role": role, "content": collapse(parts)}
        if calls:
            message["tool_calls"] = assistant_calls(where, calls, numbers)
            message["content"] = message["content"] or None
            agentic = agentic or "tool calls (a message with tool_calls)"
        messages.append(message)
    return messages, agentic


def assistant_calls(where: str, calls: Any, numbers: CallNumbers) -> list[dict[str, Any]]:
    if not isinstance(calls, list):
        raise Refusal(400, f'{where}: "tool_calls" must be a list')
    out = []
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise Refusal(400, f'{where}.tool_calls[{index}] needs a "function" with a "name"')
        call_id = numbers.call(function["name"], call.get("id"))
        out.append(tool_call(call_id, function["name"], function.get("arguments")))
    return out


def generate_messages(body: dict[str, Any]) -> list[Message]:
    """`/api/generate`: an optional system text, then the prompt and its images as one user message."""
    if body.get("context") is not None:
        raise Refusal(400, '"context" is not supported on /api/generate: this gateway keeps no context; '
                           "send the conversation as messages to /api/chat")
    prompt, system = body.get("prompt"), body.get("system")
    if not isinstance(prompt, str):
        raise Refusal(400, '"prompt" must be a string')
    if system is not None and not isinstance(system, str):
        raise Refusal(400, '"system" must be a string')
    parts = content_parts("request", prompt, body.get("images"))
    if not parts:
        raise Refusal(400, '"prompt" is empty: there is nothing to ask (a panel does not preload models)')
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    return [*messages, {"role": "user", "content": collapse(parts)}]


def response_format(fmt: Any) -> dict[str, Any] | None:
    if fmt == "json":
        return {"type": "json_object"}
    if isinstance(fmt, dict):
        return {"type": "json_schema", "json_schema": {"name": "response", "schema": fmt}}
    return None


def route_fields(body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """RM-5's OpenAI fields, and whether the request offers tools (X-1: an empty list is no tools)."""
    tools = body.get("tools")
    if tools is not None and (
        not isinstance(tools, list)
        or not all(isinstance(t, dict) and t.get("type") == "function" for t in tools)
    ):
        raise Refusal(400, '"tools" must be a list of {"type": "function", "function": {...}} objects')
    options = body.get("options")
    fields = copy_fields(options, OPTIONS) if isinstance(options, dict) else {}
    fmt = response_format(body.get("format"))
    if fmt is not None:
        fields["response_format"] = fmt
    if tools:
        fields["tools"] = tools
    return fields, bool(tools)

"""The fake's Anthropic Messages wire (`POST /v1/messages`): the event stream as Anthropic sends it
(message_start, content blocks, ping, message_delta with usage, message_stop; `event: error` mid-stream)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from tests.fakes.behaviour import (
    THINKING,
    TOOL_ARGUMENT_PIECES,
    TOOL_NAME,
    answer_for,
    estimate_tokens,
    event_stream,
    json_reply,
    reply_name,
    split_text,
    take_request,
    text_tokens,
)

STOP = {"empty_length": "max_tokens", "tools": "tool_use"}


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
        if texts:
            return " ".join(texts)
    return ""


def rate_limited(cfg: dict[str, Any]) -> web.Response:
    wait = float(cfg["retry_after"])
    reset = (datetime.now(UTC) + timedelta(seconds=wait)).isoformat().replace("+00:00", "Z")
    headers = {"retry-after": f"{wait:g}", "anthropic-ratelimit-requests-limit": "50",
               "anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": reset}
    message = "This request would exceed the rate limit for your organization of 50 requests per minute."
    return json_reply(error_body("rate_limit_error", message), cfg, 429, **headers)


def failure(cfg: dict[str, Any]) -> web.Response | None:
    behaviour = cfg["behaviour"]
    if behaviour == "rate_limit":
        return rate_limited(cfg)
    if behaviour == "error_500":
        return json_reply(error_body("api_error", "Internal server error"), cfg, 500)
    if behaviour == "error_in_200":
        return json_reply(error_body("overloaded_error", "Overloaded"), cfg)
    return None


class Frames:
    def __init__(self, resp: web.StreamResponse) -> None:
        self.resp = resp

    async def send(self, kind: str, payload: dict[str, Any]) -> None:
        frame = f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"
        await self.resp.write(frame.encode())

    async def block(self, index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        await self.send("content_block_start", {"index": index, "content_block": start})
        for delta in deltas:
            await self.send("content_block_delta", {"index": index, "delta": delta})
        await self.send("content_block_stop", {"index": index})


async def messages(request: web.Request) -> web.StreamResponse:
    body, model, cfg = await take_request(request)
    failed = failure(cfg)
    if failed is not None:
        return failed
    text = answer_for(model, cfg, last_user_text(body.get("messages") or []))
    prompt = estimate_tokens(json.dumps(body.get("messages")))
    behaviour = cfg["behaviour"]
    if not body.get("stream"):
        return json_reply(plain(model, cfg, text, prompt), cfg)
    resp = event_stream(cfg)
    await resp.prepare(request)
    out = Frames(resp)
    start: dict[str, Any] = {"id": f"msg_fake{time.monotonic_ns():x}", "type": "message", "role": "assistant",
             "model": reply_name(model, cfg), "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": prompt, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 3,
                       "output_tokens": 1}}
    await out.send("message_start", {"message": start})
    index = 0
    if behaviour == "reasoning":
        pieces = [{"type": "thinking_delta", "thinking": p} for p in split_text(THINKING, 2)]
        await out.block(0, {"type": "thinking", "thinking": ""},
                        [*pieces, {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}])
        index = 1
    await out.send("ping", {})
    pieces = [{"type": "text_delta", "text": p} for p in split_text(text)]
    if behaviour in ("midstream_error", "cut"):
        await out.send("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
        await out.send("content_block_delta", {"index": index, "delta": pieces[0]})
        if behaviour == "midstream_error":
            await out.send("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})
        return resp
    if behaviour != "tools":
        await out.block(index, {"type": "text", "text": ""}, pieces)
        index += 1
    if behaviour == "tools":
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in TOOL_ARGUMENT_PIECES]
        tool = {"type": "tool_use", "id": "toolu_fake1", "name": TOOL_NAME, "input": {}}
        await out.block(index, tool, deltas)
    produced = text_tokens(text) + (4 if behaviour == "reasoning" else 0)
    await out.send("message_delta", {"delta": {"stop_reason": STOP.get(behaviour, "end_turn"),
                                               "stop_sequence": None}, "usage": {"output_tokens": produced}})
    await out.send("message_stop", {})
    return resp


def plain(model: str, cfg: dict[str, Any], text: str, prompt: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if cfg["behaviour"] == "tools":
        content.append({"type": "tool_use", "id": "toolu_fake1", "name": TOOL_NAME,
                        "input": json.loads("".join(TOOL_ARGUMENT_PIECES))})
    return {"id": f"msg_fake{time.monotonic_ns():x}", "type": "message", "role": "assistant",
            "model": reply_name(model, cfg), "content": content,
            "stop_reason": STOP.get(cfg["behaviour"], "end_turn"), "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": text_tokens(text)}}


def list_models(request: web.Request, names: list[str]) -> web.Response:
    """Anthropic's paged list: `limit` entries from `after_id`."""
    limit = int(request.query.get("limit", "20"))
    after = request.query.get("after_id")
    start = names.index(after) + 1 if after in names else 0
    page = names[start : start + limit]
    data = [{"type": "model", "id": n, "display_name": n.upper(), "created_at": "2025-01-01T00:00:00Z"}
            for n in page]
    return web.json_response({"data": data, "has_more": start + limit < len(names),
                              "first_id": page[0] if page else None, "last_id": page[-1] if page else None})

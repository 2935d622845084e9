"""The fake's OpenAI Responses wire (`POST /v1/responses`): typed events with sequence numbers, from
`response.created` to `response.completed` (usage), `response.incomplete`, `response.failed` and `error`."""

from __future__ import annotations

import json
import time
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
    rate_limit_message,
    reply_name,
    split_text,
    take_request,
    text_tokens,
)


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def last_user_text(items: Any) -> str:
    if isinstance(items, str):
        return items
    for item in reversed(items or []):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return " ".join(p.get("text", "") for p in content or [] if p.get("type") == "input_text")
    return ""


def failure(model: str, cfg: dict[str, Any]) -> web.Response | None:
    behaviour = cfg["behaviour"]
    if behaviour == "rate_limit":
        wait = float(cfg["retry_after"])
        headers = {"retry-after": f"{wait:g}", "x-ratelimit-limit-requests": "30",
                   "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": f"{wait:g}s"}
        body = error_body(rate_limit_message(model, wait), "requests", "rate_limit_exceeded")
        return json_reply(body, cfg, 429, **headers)
    if behaviour == "error_500":
        message = "The server had an error while processing your request."
        return json_reply(error_body(message, "server_error"), cfg, 500)
    return None


class Events:
    def __init__(self, resp: web.StreamResponse) -> None:
        self.resp, self.seq = resp, 0

    async def send(self, kind: str, **payload: Any) -> None:
        frame = {"type": kind, "sequence_number": self.seq, **payload}
        self.seq += 1
        await self.resp.write(f"event: {kind}\ndata: {json.dumps(frame)}\n\n".encode())


def response_object(model: str, status: str, output: list[dict[str, Any]], use: dict[str, Any] | None,
                    **extra: Any) -> dict[str, Any]:
    return {"id": "resp_fake", "object": "response", "created_at": int(time.time()), "status": status,
            "model": model, "output": output, "usage": use, "store": False, **extra}


async def responses(request: web.Request) -> web.StreamResponse:
    body, model, cfg = await take_request(request)
    failed = failure(model, cfg)
    if failed is not None:
        return failed
    behaviour, named = cfg["behaviour"], reply_name(model, cfg)
    text = answer_for(model, cfg, last_user_text(body.get("input")))
    reasoning = 4 if behaviour == "reasoning" else 0
    use: dict[str, Any] = {"input_tokens": estimate_tokens(json.dumps(body.get("input"))),
           "input_tokens_details": {"cached_tokens": 0}, "output_tokens": text_tokens(text) + reasoning,
           "output_tokens_details": {"reasoning_tokens": reasoning}}
    use["total_tokens"] = use["input_tokens"] + use["output_tokens"]
    message = {"id": "msg_fake", "type": "message", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": text, "annotations": []}]}
    tool = {"id": "fc_fake1", "type": "function_call", "status": "completed", "call_id": "call_fake1",
            "name": TOOL_NAME, "arguments": "".join(TOOL_ARGUMENT_PIECES)}
    output = [tool] if behaviour == "tools" else [message]
    if not body.get("stream"):
        return json_reply(response_object(named, "completed", output, use), cfg)
    resp = event_stream(cfg)
    await resp.prepare(request)
    out = Events(resp)
    await out.send("response.created", response=response_object(named, "in_progress", [], None))
    await out.send("response.in_progress", response=response_object(named, "in_progress", [], None))
    if behaviour == "error_in_200":
        error = {"code": "server_error", "message": "The model failed to produce a response"}
        await out.send("response.failed", response=response_object(named, "failed", [], None, error=error))
        return resp
    index = 0
    if behaviour == "reasoning":
        await out.send("response.output_item.added", output_index=0,
                       item={"id": "rs_fake", "type": "reasoning", "summary": []})
        for piece in split_text(THINKING, 2):
            await out.send("response.reasoning_summary_text.delta", item_id="rs_fake", output_index=0,
                           summary_index=0, delta=piece)
        index = 1
    if behaviour == "tools":
        await out.send("response.output_item.added", output_index=index, item={**tool, "arguments": "",
                                                                                "status": "in_progress"})
        for piece in TOOL_ARGUMENT_PIECES:
            await out.send("response.function_call_arguments.delta", item_id="fc_fake1", output_index=index,
                           delta=piece)
        await out.send("response.function_call_arguments.done", item_id="fc_fake1", output_index=index,
                       arguments=tool["arguments"])
        await out.send("response.output_item.done", output_index=index, item=tool)
    else:
        await out.send("response.output_item.added", output_index=index,
                       item={**message, "status": "in_progress", "content": []})
        pieces = split_text(text)
        if behaviour in ("midstream_error", "cut"):
            await out.send("response.output_text.delta", item_id="msg_fake", output_index=index,
                           content_index=0, delta=pieces[0])
            if behaviour == "midstream_error":
                await out.send("error", code="server_error", message="The model crashed while generating",
                               param=None)
            return resp
        for piece in pieces:
            await out.send("response.output_text.delta", item_id="msg_fake", output_index=index,
                           content_index=0, delta=piece)
        await out.send("response.output_text.done", item_id="msg_fake", output_index=index, content_index=0,
                       text=text)
        await out.send("response.output_item.done", output_index=index, item=message)
    if behaviour == "empty_length":
        final = response_object(named, "incomplete", output, use,
                                incomplete_details={"reason": "max_output_tokens"})
        await out.send("response.incomplete", response=final)
    else:
        await out.send("response.completed", response=response_object(named, "completed", output, use))
    return resp

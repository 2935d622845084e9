"""OpenAI-compatible chat completions: the request we send (SPEC U-2) and how a reply becomes an outcome.

Pure: bytes and dicts in, `CallOutcome` out. The HTTP exchange itself lives in `upstream.py`.
"""

from __future__ import annotations

import json
from typing import Any

from services.caller.chat_parts import content_text
from services.caller.outcome import CallOutcome, ToolCall, Usage, client_failed
from services.caller.wire import (
    UpstreamRequest,
    auth_headers,
    base_headers,
    endpoint_url,
    error_object_text,
    sse_payload,
    stream_event,
)
from shared.commands import MESSAGES, SeatCall

OURS = ("model", "messages", "stream", "stream_options")  # body fields a call's options cannot override


def build_request(call: SeatCall, key: str | None) -> UpstreamRequest:
    """Streamed with a usage chunk; the call's options ride along but never override model or messages."""
    headers = base_headers(call.headers)
    headers.update(auth_headers("chat", key))
    body: dict[str, Any] = {
        "model": call.served,
        "messages": MESSAGES.dump_python(call.messages, exclude_unset=True),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    body.update({k: v for k, v in call.options.items() if k not in OURS})
    return UpstreamRequest(url=endpoint_url(call.base, "chat/completions"), headers=headers, body=body)


def without_stream_extras(request: UpstreamRequest) -> UpstreamRequest | None:
    """U-2 fallback ladder for a provider that refuses our streaming fields: first drop
    `stream_options`, then streaming itself. None when nothing is left to drop."""
    body = dict(request.body)
    if "stream_options" in body:
        body.pop("stream_options")
    elif body.get("stream"):
        body["stream"] = False
    else:
        return None
    return UpstreamRequest(url=request.url, headers=request.headers, body=body)


def refuses_streaming(status: int, body: str) -> bool:
    return status in (400, 422) and "stream" in body.lower()


def stream_fallback(request: UpstreamRequest, outcome: CallOutcome) -> UpstreamRequest | None:
    """U-2: a provider that refuses our streaming fields is asked again without them."""
    if outcome.http_status is None or not refuses_streaming(outcome.http_status, outcome.error):
        return None
    return without_stream_extras(request)


def reasoning_of(part: dict[str, Any]) -> str:
    """Providers name it `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama)."""
    value = part.get("reasoning_content") or part.get("reasoning")
    return value if isinstance(value, str) else ""


# ---------------------------------------------------------------- plain JSON replies


def parse_plain(raw: bytes) -> CallOutcome:
    try:
        data = json.loads(raw)
    except ValueError:
        return client_failed(f"non-JSON reply: {raw[:200].decode(errors='replace')}")
    if not isinstance(data, dict):
        return client_failed("non-JSON reply: not an object")
    if data.get("error"):
        return CallOutcome(error=error_object_text(data["error"], "in a 200 reply"))
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return client_failed("no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    outcome = CallOutcome(
        text=content_text(message.get("content")),
        reasoning=reasoning_of(message),
        tool_calls=[plain_tool_call(tc) for tc in message.get("tool_calls") or []],
        usage=Usage.from_openai(data["usage"]) if isinstance(data.get("usage"), dict) else None,
        finish=choice.get("finish_reason"),
        model=str(data.get("model") or ""),
    )
    if outcome.finish == "error":
        outcome.error = error_object_text(choice.get("error") or "finish_reason error", "in a 200 reply")
    return outcome


def plain_tool_call(raw: dict[str, Any]) -> ToolCall:
    function = raw.get("function") or {}
    return ToolCall(id=str(raw.get("id", "")), type=str(raw.get("type", "function")),
                    name=str(function.get("name", "")), arguments=str(function.get("arguments") or ""))


# ---------------------------------------------------------------- server-sent events


class StreamParser:
    """Folds the lines of an SSE chat stream into one outcome; `finish()` judges how the stream ended."""

    def __init__(self) -> None:
        self.outcome = CallOutcome()
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._tools: dict[int, ToolCall] = {}
        self._args: dict[int, list[str]] = {}
        self._saw_choices = False
        self.done = False

    def feed_line(self, line: str) -> None:
        payload = sse_payload(line)
        if self.outcome.error or self.done or payload is None:
            return
        if payload == "[DONE]":
            self.done = True
            return
        chunk = stream_event(payload, self.outcome)
        if chunk is not None:
            self._fold(chunk)

    def _fold(self, chunk: dict[str, Any]) -> None:
        if chunk.get("error"):
            self.outcome.error = error_object_text(chunk["error"], "mid-stream")
            return
        if chunk.get("model") and not self.outcome.model:
            self.outcome.model = str(chunk["model"])
        if isinstance(chunk.get("usage"), dict):
            self.outcome.usage = Usage.from_openai(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._fold_choice(choice)

    def _fold_choice(self, choice: dict[str, Any]) -> None:
        self._saw_choices = True
        delta = choice.get("delta") or choice.get("message") or {}
        self._text.append(content_text(delta.get("content")))
        self._reasoning.append(reasoning_of(delta))
        for raw in delta.get("tool_calls") or []:
            self._fold_tool_delta(raw)
        finish = choice.get("finish_reason")
        if finish:
            self.outcome.finish = finish
            if finish == "error":
                why = choice.get("error") or "finish_reason error"
                self.outcome.error = error_object_text(why, "mid-stream")

    def _fold_tool_delta(self, raw: dict[str, Any]) -> None:
        index = int(raw.get("index", len(self._tools)))
        call = self._tools.setdefault(index, ToolCall())
        function = raw.get("function") or {}
        call.id = raw.get("id") or call.id
        call.type = raw.get("type") or call.type
        call.name = function.get("name") or call.name
        self._args.setdefault(index, []).append(function.get("arguments") or "")

    def finish(self) -> CallOutcome:
        out = self.outcome
        out.text, out.reasoning = "".join(self._text), "".join(self._reasoning)
        for index, call in sorted(self._tools.items()):
            call.arguments = "".join(self._args.get(index, []))
            out.tool_calls.append(call)
        if out.error:
            return out
        if not self.done and out.finish is None:
            out.error = "Error: client failed: stream cut before [DONE]"
        elif not self._saw_choices:
            out.error = "Error: client failed: no choices"
        return out


def parse_stream(raw: bytes) -> CallOutcome:
    """A whole SSE body at once (a provider that streamed with a JSON content type)."""
    parser = StreamParser()
    for line in raw.decode(errors="replace").splitlines():
        parser.feed_line(line)
    return parser.finish()

"""OpenAI Responses (`POST /v1/responses`): H-G4, S-5, H-1.

The panel's reply is one completed message item in a full response object (nothing stored). Streamed, it is
the typed event sequence with contiguous `sequence_number`s, closed by `response.completed` whose response
carries the whole text and `bench`. The request side lives in `responses_request`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any

from services.gateway.ask import Ask
from services.gateway.formats.base import Answer, Format, Reply, StreamEncoder
from services.gateway.formats.canonical import sse_event, translated_ask
from services.gateway.formats.responses_request import request_messages, route_fields
from services.gateway.panel.flatten import estimate_text


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


def usage(input_tokens: int, text: str) -> dict[str, Any]:
    """P-5 estimates (S-6)."""
    output_tokens = estimate_text(text)
    return {
        "input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


def message_item(item_id: str, status: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "status": status, "role": "assistant", "content": content}


def response_object(
    resp_id: str, created_at: int, model: str, status: str, output: list[dict[str, Any]], **rest: Any
) -> dict[str, Any]:
    return {
        "id": resp_id, "object": "response", "created_at": created_at, "status": status, "error": None,
        "incomplete_details": None, "model": model, "output": output, "parallel_tool_calls": False,
        "previous_response_id": None, "store": False, "text": {"format": {"type": "text"}},
        "tool_choice": "none", "tools": [], "truncation": "disabled", "usage": None, **rest,
    }


def new_ids() -> tuple[str, str]:
    return f"resp_{secrets.token_hex(24)}", f"msg_{secrets.token_hex(24)}"


class NumberedEvents:
    """S-5: Responses events, each numbered 0, 1, 2… in the order they are written."""

    def __init__(self) -> None:
        self.sequence = 0

    def __call__(self, kind: str, **payload: Any) -> bytes:
        out = sse_event(kind, {"type": kind, **payload, "sequence_number": self.sequence})
        self.sequence += 1
        return out


class Responses(Format):
    name = "responses"
    routes = ("/v1/responses", "/responses")

    def parse(self, body: dict[str, Any], params: Mapping[str, str]) -> Ask:
        return translated_ask(self.name, body, request_messages, route_fields)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error_body(status, message)

    def reply(self, ask: Ask, answer: Answer) -> Reply:
        resp_id, item_id = new_ids()
        item = message_item(item_id, "completed", [text_part(answer.content)])
        return Reply(body=response_object(
            resp_id, int(time.time()), ask.asked_model, "completed", [item],
            usage=usage(ask.estimate, answer.content), bench=answer.bench,
        ))

    def encoder(self, ask: Ask, collection: str) -> StreamEncoder:
        return ResponseEvents(ask.asked_model, ask.estimate)


class ResponseEvents(StreamEncoder):
    """S-5 Responses: created, in_progress, item and part added, text deltas, then the done events and
    `response.completed`; every event numbered 0, 1, 2… (keep-alives are SSE comments, not events)."""

    def __init__(self, model: str, input_tokens: int) -> None:
        self.resp_id, self.item_id = new_ids()
        self.created_at = int(time.time())
        self.model = model
        self.input_tokens = input_tokens
        self.event = NumberedEvents()
        self.text = ""

    def response(self, status: str, output: list[dict[str, Any]], **rest: Any) -> dict[str, Any]:
        return response_object(self.resp_id, self.created_at, self.model, status, output, **rest)

    def at_text(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "output_index": 0, "content_index": 0}

    def start(self) -> bytes:
        item = message_item(self.item_id, "in_progress", [])
        return (
            self.event("response.created", response=self.response("in_progress", []))
            + self.event("response.in_progress", response=self.response("in_progress", []))
            + self.event("response.output_item.added", output_index=0, item=item)
            + self.event("response.content_part.added", **self.at_text(), part=text_part(""))
        )

    def piece(self, text: str) -> bytes:
        self.text += text
        return self.event("response.output_text.delta", **self.at_text(), delta=text, logprobs=[])

    def keepalive(self) -> bytes:
        return b": keep-alive\n\n"

    def finish(self, bench: dict[str, Any]) -> bytes:
        part = text_part(self.text)
        item = message_item(self.item_id, "completed", [part])
        done = self.response("completed", [item], usage=usage(self.input_tokens, self.text), bench=bench)
        return (
            self.event("response.output_text.done", **self.at_text(), text=self.text, logprobs=[])
            + self.event("response.content_part.done", **self.at_text(), part=part)
            + self.event("response.output_item.done", output_index=0, item=item)
            + self.event("response.completed", response=done)
        )

    def error(self, status: int, message: str) -> bytes:
        code = "server_error" if status >= 500 else "invalid_request"
        failed = self.response("failed", [], error={"code": code, "message": message})
        return (
            self.event("error", code=str(status), message=message, param=None)
            + self.event("response.failed", response=failed)
        )

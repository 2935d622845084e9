"""OpenAI Responses (`POST /v1/responses`): H-G4, S-5, H-1.

The panel's reply is one completed message item in a full response object (nothing stored). Streamed, it is
the typed event sequence with contiguous `sequence_number`s, closed by `response.completed` whose response
carries the whole text and `bench`. The request side lives in `responses_request`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from services.gateway.ask import Ask
from services.gateway.formats.base import Answer, Format, Reply, StreamEncoder
from services.gateway.formats.canonical import sse_event, translated_ask
from services.gateway.formats.responses_request import hosted_items, request_messages, route_fields
from services.gateway.formats.responses_tools import tool_offer
from services.gateway.formats.route_encoder import RouteContext, RouteEncoder
from services.gateway.panel.flatten import estimate_text
from services.gateway.route_mode.assemble import Chunk, ToolCall, TurnSummary, delta_of, text_of


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
        offer = tool_offer(body)
        ask = translated_ask(self.name, body, request_messages, lambda raw: route_fields(raw, offer))
        return replace(ask, custom_tools=offer.custom, namespaced_tools=offer.namespaced,
                       dropped_tools=offer.dropped, dropped_items=hosted_items(body))

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

    def route_encoder(self, context: RouteContext) -> RouteEncoder:
        return ResponseRouteEncoder(context)

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


# ---------------------------------------------------------------- route mode
# OpenAI Responses in route mode (RM-7, A-52, A-53).
#
# `response.created` and `response.in_progress` with the 200; a message item opened on the first text and
# fed by `output_text.delta`s; at the end each tool call as a whole item: a `function_call` (added
# in_progress with empty arguments, one arguments delta, its done, `output_item.done`), or, for a custom tool
# (which went upstream as a function taking one string `input`), a `custom_tool_call` carrying that `input`;
# a call of a namespace member carries the `namespace` and the member's own `name`, as Codex routes it.
# `response.completed` holds every output item, the member's usage and `bench`. Every event is numbered
# 0, 1, 2… (keep-alives are SSE comments, not events).


def custom_input(call: ToolCall) -> str:
    """The `input` string of a call to a custom tool (its one argument upstream)."""
    value = call.arguments_object().get("input")
    return value if isinstance(value, str) else call.arguments


class ResponseRouteEncoder(RouteEncoder):
    def __init__(self, context: RouteContext) -> None:
        super().__init__(context)
        self.resp_id, self.message_id = new_ids()
        self.created_at = int(time.time())
        self.event = NumberedEvents()
        self.outputs = 0  # output items opened so far
        self.message_index: int | None = None  # the message item's output index, once opened
        self.text = ""

    # ------------------------------------------------------------ pieces

    def response(self, status: str, output: list[dict[str, Any]], **rest: Any) -> dict[str, Any]:
        return response_object(self.resp_id, self.created_at, self.context.model, status, output, **rest)

    def at_text(self) -> dict[str, Any]:
        return {"item_id": self.message_id, "output_index": self.message_index, "content_index": 0}

    def message(self, status: str) -> dict[str, Any]:
        return message_item(self.message_id, status, [text_part(self.text)] if status == "completed" else [])

    def call_item(self, call: ToolCall, done: bool) -> dict[str, Any]:
        """The call as the agent declared its tool: custom or function, and a namespace member under its own
        namespace and name (a name the agent never offered goes back as the member wrote it)."""
        status = "completed" if done else "in_progress"
        namespace, name = self.context.namespaced_tools.get(call.name, ("", call.name))
        if call.name in self.context.custom_tools:
            item = {"type": "custom_tool_call", "id": f"ctc_{secrets.token_hex(24)}", "call_id": call.id,
                    "name": name, "input": custom_input(call) if done else "", "status": status}
        else:
            item = {"type": "function_call", "id": f"fc_{secrets.token_hex(24)}", "call_id": call.id,
                    "name": name, "arguments": call.arguments_json() if done else "", "status": status}
        if namespace:
            item["namespace"] = namespace
        return item

    def usage(self, summary: TurnSummary) -> dict[str, Any]:
        tokens_in, tokens_out = self.counts(summary)
        usage = summary.usage
        return {
            "input_tokens": tokens_in,
            "input_tokens_details": {"cached_tokens": usage.cached if usage else 0},
            "output_tokens": tokens_out,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning if usage else 0},
            "total_tokens": tokens_in + tokens_out,
        }

    def output(self, summary: TurnSummary) -> list[dict[str, Any]]:
        """Every output item, completed: the message (when there is text, or nothing else), then the calls."""
        self.text = summary.text
        items = [self.message("completed")] if summary.text or not summary.tool_calls else []
        return items + [self.call_item(call, done=True) for call in summary.tool_calls]

    # ------------------------------------------------------------ the stream

    def open_message(self) -> bytes:
        self.message_index = self.outputs
        self.outputs += 1
        return (self.event("response.output_item.added", output_index=self.message_index,
                           item=self.message("in_progress"))
                + self.event("response.content_part.added", **self.at_text(), part=text_part("")))

    def close_message(self) -> tuple[bytes, dict[str, Any]]:
        item = self.message("completed")
        part = item["content"][0]
        out = (self.event("response.output_text.done", **self.at_text(), text=self.text, logprobs=[])
               + self.event("response.content_part.done", **self.at_text(), part=part)
               + self.event("response.output_item.done", output_index=self.message_index, item=item))
        return out, item

    def call_events(self, call: ToolCall) -> tuple[bytes, dict[str, Any]]:
        index = self.outputs
        self.outputs += 1
        added, done = self.call_item(call, done=False), self.call_item(call, done=True)
        done["id"] = added["id"]
        at = {"item_id": added["id"], "output_index": index}
        out = self.event("response.output_item.added", output_index=index, item=added)
        if added["type"] == "custom_tool_call":
            out += (self.event("response.custom_tool_call_input.delta", **at, delta=done["input"])
                    + self.event("response.custom_tool_call_input.done", **at, input=done["input"]))
        else:
            out += (self.event("response.function_call_arguments.delta", **at, delta=done["arguments"])
                    + self.event("response.function_call_arguments.done", **at, name=done["name"],
                                 arguments=done["arguments"]))
        return out + self.event("response.output_item.done", output_index=index, item=done), done

    def start(self) -> bytes:
        return (self.event("response.created", response=self.response("in_progress", []))
                + self.event("response.in_progress", response=self.response("in_progress", [])))

    def chunk(self, chunk: Chunk) -> bytes:
        text = text_of(delta_of(chunk))
        if not text:
            return b""
        out = self.open_message() if self.message_index is None else b""
        self.text += text
        return out + self.event("response.output_text.delta", **self.at_text(), delta=text, logprobs=[])

    def keepalive(self) -> bytes:
        return b": keep-alive\n\n"

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        out = b""
        items: list[dict[str, Any]] = []
        if self.message_index is None and not summary.tool_calls:
            out += self.open_message()  # a turn with neither text nor calls still answers with a message
        if self.message_index is not None:
            closed, item = self.close_message()
            out += closed
            items.append(item)
        for call in summary.tool_calls:
            events, item = self.call_events(call)
            out += events
            items.append(item)
        done = self.response("completed", items, usage=self.usage(summary), bench=bench)
        return out + self.event("response.completed", response=done)

    def error(self, status: int, message: str) -> bytes:
        code = "server_error" if status >= 500 else "invalid_request"
        failed = self.response("failed", [], error={"code": code, "message": message})
        return (self.event("error", code=str(status), message=message, param=None)
                + self.event("response.failed", response=failed))

    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> dict[str, Any]:
        return self.response("completed", self.output(summary), usage=self.usage(summary), bench=bench)

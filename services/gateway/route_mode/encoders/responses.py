"""OpenAI Responses in route mode (RM-7, A-52, A-53).

`response.created` and `response.in_progress` with the 200; a message item opened on the first text and
fed by `output_text.delta`s; at the end each tool call as a whole item: a `function_call` (added
in_progress with empty arguments, one arguments delta, its done, `output_item.done`), or, for a custom tool
(which went upstream as a function taking one string `input`), a `custom_tool_call` carrying that `input`.
`response.completed` holds every output item, the member's usage and `bench`. Every event is numbered
0, 1, 2… (keep-alives are SSE comments, not events).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any

from services.gateway.formats.responses import (
    NumberedEvents,
    message_item,
    new_ids,
    response_object,
    text_part,
)
from services.gateway.route_mode.assemble import Chunk, ToolCall, TurnSummary, delta_of, text_of
from services.gateway.route_mode.encoders.base import RouteContext, RouteEncoder


def custom_tool_names(body: Mapping[str, Any]) -> frozenset[str]:
    """The names of a Responses request's custom tools (free-form input, e.g. Codex's apply_patch)."""
    tools = body.get("tools")
    return frozenset(
        t["name"] for t in (tools if isinstance(tools, list) else [])
        if isinstance(t, dict) and t.get("type") == "custom" and isinstance(t.get("name"), str)
    )


def custom_input(call: ToolCall) -> str:
    """The `input` string of a call to a custom tool (its one argument upstream)."""
    value = call.arguments_object().get("input")
    return value if isinstance(value, str) else call.arguments


class ResponseRelay(RouteEncoder):
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
        status = "completed" if done else "in_progress"
        if call.name in self.context.custom_tools:
            return {"type": "custom_tool_call", "id": f"ctc_{secrets.token_hex(24)}", "call_id": call.id,
                    "name": call.name, "input": custom_input(call) if done else "", "status": status}
        return {"type": "function_call", "id": f"fc_{secrets.token_hex(24)}", "call_id": call.id,
                "name": call.name, "arguments": call.arguments_json() if done else "", "status": status}

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
                    + self.event("response.function_call_arguments.done", **at, name=call.name,
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

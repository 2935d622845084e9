"""OpenAI's Responses API (C-3 `responses`): streamed, `store: false`, typed events to one outcome. Pure."""

from __future__ import annotations

from typing import Any

from services.caller.chat_parts import (
    Image,
    content_text,
    forced_tool,
    function_tools,
    pieces_of,
    system_text,
    tool_call_id,
    tool_calls_of,
    turns,
)
from services.caller.outcome import CallOutcome, ToolCall, Usage
from services.caller.stream_fold import StreamFold, ToolPieces, reply_object
from services.caller.wire import (
    UpstreamRequest,
    auth_headers,
    base_headers,
    chat_options,
    endpoint_url,
    error_object_text,
    output_budget,
)
from shared.commands import Msg, SeatCall

PASSED = ("temperature", "top_p", "parallel_tool_calls", "metadata", "reasoning", "text")
REASONING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")
ENDINGS = ("response.completed", "response.incomplete")
FAILED = {"status": "failed"}


def build_request(call: SeatCall, key: str | None) -> UpstreamRequest:
    headers = base_headers(call.headers)
    headers.update(auth_headers("responses", key))
    body: dict[str, Any] = {"model": call.served, "input": input_of(call.messages), "stream": True,
                            "store": False}
    system = system_text(call.messages)
    if system:
        body["instructions"] = system
    budget = output_budget(call.options)
    if budget:
        body["max_output_tokens"] = budget
    body.update(chat_options(call, PASSED))
    effort = call.options.get("reasoning_effort")
    if isinstance(effort, str) and "reasoning" not in body:
        body["reasoning"] = {"effort": effort}
    body.update(tools_of(call.options))
    return UpstreamRequest(url=endpoint_url(call.base, "responses"), headers=headers, body=body)


def tools_of(options: dict[str, Any]) -> dict[str, Any]:
    """Responses tools are flat: {type: function, name, description, parameters}."""
    tools = [{"type": "function", "name": f["name"], "description": f.get("description", ""),
              "parameters": f.get("parameters") or {"type": "object", "properties": {}}}
             for f in function_tools(options)]
    if not tools:
        return {}
    choice = options.get("tool_choice")
    named = forced_tool(choice)
    if named:
        return {"tools": tools, "tool_choice": {"type": "function", "name": named}}
    return {"tools": tools, "tool_choice": choice} if isinstance(choice, str) else {"tools": tools}


def input_image(image: Image) -> dict[str, Any]:
    url = f"data:{image.media_type};base64,{image.data}" if image.data else image.url
    return {"type": "input_image", "image_url": url}


def items_of(message: Msg) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "function_call_output", "call_id": tool_call_id(message),
                 "output": content_text(message.content)}]
    items: list[dict[str, Any]] = []
    if message.role == "assistant":
        text = content_text(message.content)
        if text:
            items.append({"role": "assistant", "content": [{"type": "output_text", "text": text}]})
        items += [{"type": "function_call", "call_id": t.id, "name": t.name, "arguments": t.arguments}
                  for t in tool_calls_of(message)]
        return items
    content = [input_image(piece) if isinstance(piece, Image) else {"type": "input_text", "text": piece}
               for piece in pieces_of(message.content)]
    return [{"role": "user", "content": content}] if content else []


def input_of(messages: list[Msg]) -> list[dict[str, Any]]:
    return [item for message in turns(messages) for item in items_of(message)]


def usage_of(raw: dict[str, Any]) -> Usage:
    return Usage(tokens_in=int(raw.get("input_tokens") or 0), tokens_out=int(raw.get("output_tokens") or 0),
                 reasoning=int((raw.get("output_tokens_details") or {}).get("reasoning_tokens") or 0),
                 cached=int((raw.get("input_tokens_details") or {}).get("cached_tokens") or 0))


def kind_and_response(event: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A streamed event's type and the response object it carries ({} for an event without one)."""
    raw = event.get("response")
    return str(event.get("type", "")), raw if isinstance(raw, dict) else {}


class StreamParser(StreamFold):
    """Typed events: output text and reasoning deltas, function calls by item, then the final response."""

    markers = ("[DONE]",)

    def __init__(self) -> None:
        super().__init__()
        self._tools: ToolPieces[str] = ToolPieces()  # by output item id

    def _fold(self, event: dict[str, Any]) -> None:
        kind, response = kind_and_response(event)
        if response.get("model"):
            self.outcome.model = str(response["model"])
        if kind == "error":
            detail = {k: v for k, v in event.items() if k != "type"}
            self.outcome.error = error_object_text(detail, "mid-stream")
        elif kind == "response.failed":
            self.outcome.error = error_object_text(response.get("error") or FAILED, "mid-stream")
        elif kind == "response.output_text.delta":
            self._text.append(str(event.get("delta", "")))
        elif kind in REASONING_DELTAS:
            self._reasoning.append(str(event.get("delta", "")))
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self._item(event.get("item") or {}, final=kind.endswith("done"))
        elif kind == "response.function_call_arguments.delta":
            self._tools.args.setdefault(str(event.get("item_id", "")), []).append(str(event.get("delta", "")))
        elif kind in ENDINGS:
            self._end(response)

    def _item(self, item: dict[str, Any], final: bool) -> None:
        if item.get("type") != "function_call":
            return
        key = str(item.get("id") or item.get("call_id") or len(self._tools.calls))
        self._tools.calls[key] = ToolCall(id=str(item.get("call_id") or key), name=str(item.get("name", "")))
        if final and isinstance(item.get("arguments"), str):
            self._tools.args[key] = [item["arguments"]]

    def _end(self, response: dict[str, Any]) -> None:
        self.done = True
        if isinstance(response.get("usage"), dict):
            self.outcome.usage = usage_of(response["usage"])
        reason = (response.get("incomplete_details") or {}).get("reason")
        if response.get("status") == "incomplete":
            self.outcome.finish = "length" if reason == "max_output_tokens" else str(reason or "incomplete")
        else:
            self.outcome.finish = "tool_calls" if self._tools.calls else "stop"

    def finish(self) -> CallOutcome:
        self.outcome.tool_calls += self._tools.whole(list(self._tools.calls))
        return self._whole(self.done, "response.completed")


def parse_plain(raw: bytes) -> CallOutcome:
    """A non-streamed response object."""
    data, failed = reply_object(raw)
    if failed is not None:
        return failed
    if data.get("error") or data.get("status") == "failed":
        return CallOutcome(error=error_object_text(data.get("error") or FAILED, "in a 200 reply"))
    parser = StreamParser()
    for item in data.get("output") or []:
        if item.get("type") == "message":
            parser._text += [str(c.get("text", "")) for c in item.get("content") or []
                             if c.get("type") == "output_text"]
        elif item.get("type") == "reasoning":
            parser._reasoning += [str(s.get("text", "")) for s in item.get("summary") or []]
        else:
            parser._item(item, final=True)
    parser.outcome.model = str(data.get("model") or "")
    parser._end(data)
    return parser.finish()

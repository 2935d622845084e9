"""What the translated formats (completions, Responses, Anthropic, Ollama, Gemini) share on the way in.

Each turns its request into OpenAI chat messages (the Ask's canonical shape): text-only content collapsed to
one string, images as `image_url` parts (X-5), tool calls as an assistant message's `tool_calls` and tool
results as `tool` messages, so route mode can pass an agent's turn on unchanged (RM-5).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from services.gateway.ask import Ask, make_ask
from services.gateway.formats.common import bench_fields, check_image_url, model_field
from shared.refusal import Refusal

Message = dict[str, Any]
Part = dict[str, Any]


def stream_flag(body: Mapping[str, Any], default: bool = False) -> bool:
    stream = body.get("stream")
    if stream is None:
        return default
    if not isinstance(stream, bool):
        raise Refusal(400, '"stream" must be true or false')
    return stream


def translated_ask(
    format: str, body: dict[str, Any],
    request_messages: Callable[[dict[str, Any]], tuple[list[Message], str]],
    route_fields: Callable[[dict[str, Any]], tuple[dict[str, Any], bool]],
) -> Ask:
    """The Ask of a format whose body translates to chat messages and RM-5's OpenAI route fields."""
    model = model_field(body)
    nominees, reply = bench_fields(body)
    messages, agentic = request_messages(body)
    fields, has_tools = route_fields(body)
    return make_ask(
        format, model, messages, with_=nominees, reply=reply, stream=stream_flag(body),
        agentic="tools" if has_tools else agentic, route_fields=fields,
    )


def text_part(text: str) -> Part:
    return {"type": "text", "text": text}


def image_part(url: Any, detail: Any = None) -> Part:
    """P-6: checked, never fetched."""
    check_image_url(url)
    image: dict[str, Any] = {"url": url}
    if isinstance(detail, str):
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


def data_url(mime: Any, data: Any, where: str) -> str:
    """Inline image bytes (base64) → a data URL. Only images: PDFs, audio and the like are refused (X-3).
    URL-safe base64 (the google-genai SDK sends it) is turned into the standard alphabet providers expect."""
    if not isinstance(mime, str) or not mime.lower().startswith("image/"):
        shown = json.dumps(mime)
        raise Refusal(400, f"{where}: only images can be sent inline (media type {shown} is not one)")
    if not isinstance(data, str) or not data:
        raise Refusal(400, f"{where}: the image data must be a non-empty base64 string")
    url = f"data:{mime};base64,{data.replace('-', '+').replace('_', '/')}"
    check_image_url(url)
    return url


def collapse(parts: list[Part]) -> str | list[Part]:
    """X-5: text-only content becomes one string joined by blank lines; content with images stays parts."""
    if all(part.get("type") == "text" for part in parts):
        return "\n\n".join(part["text"] for part in parts)
    return parts


def tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """An OpenAI tool call; arguments are a JSON string (objects are encoded)."""
    if not isinstance(arguments, str):
        arguments = json.dumps({} if arguments is None else arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def add_tool_call(messages: list[Message], call: dict[str, Any]) -> None:
    """The calls of one turn ride on that turn's assistant message, as OpenAI carries them."""
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "assistant":
        last.setdefault("tool_calls", []).append(call)
    else:
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})


def tool_message(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def function_tool(name: Any, description: Any, parameters: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if isinstance(description, str) and description:
        function["description"] = description
    if isinstance(parameters, dict):
        function["parameters"] = parameters
    return {"type": "function", "function": function}


def copy_fields(source: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """The given fields of `source` that are set, renamed to their OpenAI names (route mode, RM-5)."""
    return {openai: source[name] for name, openai in names.items() if source.get(name) is not None}


def tool_fields(
    body: Mapping[str, Any], sampling: Mapping[str, str], chat_tool: Callable[[int, Any], dict[str, Any]],
) -> tuple[dict[str, Any], bool]:
    """RM-5's sampling fields with the offered tools in OpenAI's shape, and whether the request offers
    tools (X-1: an empty list is no tools)."""
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise Refusal(400, '"tools" must be a list')
    fields = copy_fields(body, sampling)
    if tools:
        fields["tools"] = [chat_tool(index, tool) for index, tool in enumerate(tools)]
    return fields, bool(tools)


class CallNumbers:
    """RM-5: Gemini and Ollama calls may carry no ids: they are numbered `call_0`, `call_1`… per request,
    and a result is matched to the oldest open call of the same name (or any, when it names none)."""

    def __init__(self) -> None:
        self.count = 0
        self.open: list[tuple[str, str]] = []

    def fresh(self) -> str:
        call_id = f"call_{self.count}"
        self.count += 1
        return call_id

    def call(self, name: str, given: Any = None) -> str:
        call_id = given if isinstance(given, str) and given else self.fresh()
        self.open.append((call_id, name))
        return call_id

    def result(self, name: Any, given: Any = None) -> str:
        for index, (call_id, called) in enumerate(self.open):
            if (call_id == given) if given else (not name or called == name):
                del self.open[index]
                return call_id
        return given if isinstance(given, str) and given else self.fresh()


def sse_event(event: str, payload: Any) -> bytes:
    """One named server-sent event carrying JSON (Anthropic and Responses streams)."""
    return f"event: {event}\ndata: ".encode() + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

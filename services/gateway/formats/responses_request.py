"""OpenAI Responses request → canonical chat messages and route fields: H-G4, X-1..X-5.

Nothing is stored, so a request must carry its whole conversation (`previous_response_id` and
`conversation` are refused). Function and custom tool calls become assistant `tool_calls`, their outputs
`tool` messages (a custom tool is a function taking one string `input`, RM-5). Hosted tools cannot run here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from services.gateway.ask import Refusal
from services.gateway.formats.canonical import (
    Message,
    Part,
    add_tool_call,
    collapse,
    function_tool,
    image_part,
    text_part,
    tool_call,
    tool_fields,
    tool_message,
)
from services.gateway.formats.common import object_list

ROLES = ("user", "assistant", "system", "developer")
TEXT_PARTS = ("input_text", "output_text", "text")
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
SAMPLING = {"max_output_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p",
            "parallel_tool_calls": "parallel_tool_calls"}
CUSTOM_PARAMETERS = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
STORED = '"{}" is not supported: this gateway stores no responses; send the whole conversation in "input"'


def content_parts(where: str, content: Any) -> list[Part]:
    """A message's or a tool output's content: text parts and `input_image` with an `image_url` (X-3, X-5)."""
    if isinstance(content, str):
        return [text_part(content)]
    if not isinstance(content, list):
        raise Refusal(400, f"{where}: content must be a string or a list of content parts")
    parts: list[Part] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in TEXT_PARTS:
            if not isinstance(part.get("text"), str):
                raise Refusal(400, f'{where}: the {kind} part needs a "text" string')
            parts.append(text_part(part["text"]))
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            parts.append(text_part(part["refusal"]))
        elif kind == "input_image" and part.get("image_url") is not None:
            parts.append(image_part(part["image_url"], part.get("detail")))
        elif kind == "input_image":
            raise Refusal(400, f'{where}: an input_image needs an "image_url" (http(s) or data URL); this '
                               "gateway stores no files, so a file_id cannot be read")
        else:
            raise Refusal(400, f"{where}: content parts of type {json.dumps(kind)} are not supported "
                               "(input_text, output_text, refusal and input_image with an image_url are)")
    return parts


def call_of(where: str, item: dict[str, Any]) -> dict[str, Any]:
    name, call_id = item.get("name"), item.get("call_id") or item.get("id")
    if not isinstance(name, str) or not isinstance(call_id, str):
        raise Refusal(400, f'{where}: a {item["type"]} needs a "name" and a "call_id"')
    if item["type"] == "custom_tool_call":
        return tool_call(call_id, name, {"input": item.get("input", "")})
    return tool_call(call_id, name, item.get("arguments", "{}"))


class Conversation:
    """The messages as they build up. Images a tool returned wait for a user message after the run of tool
    messages, since OpenAI's tool messages carry text only and must follow their call directly."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.tool_images: list[Part] = []

    def flush(self) -> None:
        if self.tool_images:
            self.messages.append({"role": "user", "content": self.tool_images})
            self.tool_images = []

    def message(self, where: str, item: dict[str, Any]) -> None:
        role = item.get("role")
        if role not in ROLES:
            raise Refusal(400, f"{where}.role must be one of {', '.join(ROLES)} (got {json.dumps(role)})")
        self.flush()
        self.messages.append({"role": role, "content": collapse(content_parts(where, item.get("content")))})

    def call(self, where: str, item: dict[str, Any]) -> None:
        self.flush()
        add_tool_call(self.messages, call_of(where, item))

    def output(self, where: str, item: dict[str, Any]) -> None:
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            raise Refusal(400, f'{where}: a {item["type"]} needs a "call_id"')
        parts = content_parts(where, item.get("output", ""))
        texts = [p for p in parts if p["type"] == "text"]
        self.tool_images += [p for p in parts if p["type"] != "text"]
        self.messages.append(tool_message(call_id, "\n\n".join(p["text"] for p in texts)))


def request_messages(body: dict[str, Any]) -> tuple[list[Message], str]:
    """The messages (instructions first) and why they make an agent's turn ("" when they do not)."""
    for key in ("previous_response_id", "conversation"):
        if body.get(key) is not None:
            raise Refusal(400, STORED.format(key))
    talk = Conversation()
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise Refusal(400, '"instructions" must be a string')
    if instructions:
        talk.messages.append({"role": "system", "content": instructions})
    raw = body.get("input")
    if isinstance(raw, str):
        talk.messages.append({"role": "user", "content": raw})
        return talk.messages, ""
    raw = object_list(raw, "input", "a string or a list of input items (objects)")
    agentic = ""
    for index, item in enumerate(raw):
        where = f"input[{index}]"
        kind = item.get("type", "message")
        if kind == "message":
            talk.message(where, item)
        elif kind in CALLS:
            talk.call(where, item)
            agentic = agentic or f"tool calls (a {kind} item)"
        elif kind in OUTPUTS:
            talk.output(where, item)
            agentic = agentic or f"tool results (a {kind} item)"
        elif kind != "reasoning":  # earlier reasoning is ignored everywhere
            raise Refusal(400, f"{where}: input items of type {json.dumps(kind)} are not supported "
                               "(messages, function_call(_output), custom_tool_call(_output) and reasoning "
                               "are; hosted tools and stored items are not)")
    talk.flush()
    return talk.messages, agentic


def chat_tool(index: int, tool: Any) -> dict[str, Any]:
    """X-2: only `function` and `custom` tools; a custom tool becomes a function with one string `input`."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    if kind == "function":
        chat = function_tool(tool.get("name"), tool.get("description"), tool.get("parameters"))
        if isinstance(tool.get("strict"), bool):
            chat["function"]["strict"] = tool["strict"]
        return chat
    if kind == "custom":
        description = tool.get("description") or ""
        grammar = tool.get("format") if isinstance(tool.get("format"), dict) else {}
        if grammar.get("type") == "grammar":
            syntax, definition = grammar.get("syntax"), grammar.get("definition")
            description += f"\n\nThe input must follow this {syntax} grammar:\n{definition}"
        return function_tool(tool.get("name"), description.strip(), CUSTOM_PARAMETERS)
    raise Refusal(400, f"tools[{index}] is a hosted tool ({json.dumps(kind)}) that this gateway cannot run; "
                       'only "function" and "custom" tools are served')


def tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") in ("function", "custom") and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    return None


def response_format(text: Any) -> dict[str, Any] | None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") not in ("json_schema", "json_object"):
        return None
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    schema = {k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}
    return {"type": "json_schema", "json_schema": schema}


def route_fields(body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """RM-5's OpenAI fields, and whether the request offers tools (X-1: an empty list is no tools)."""
    fields, has_tools = tool_fields(body, SAMPLING, chat_tool)
    choice, fmt = tool_choice(body.get("tool_choice")), response_format(body.get("text"))
    if choice is not None:
        fields["tool_choice"] = choice
    if fmt is not None:
        fields["response_format"] = fmt
    return fields, has_tools


def custom_tool_names(body: Mapping[str, Any]) -> frozenset[str]:
    """The names of a Responses request's custom tools (free-form input, e.g. Codex's apply_patch)."""
    tools = body.get("tools")
    return frozenset(
        t["name"] for t in (tools if isinstance(tools, list) else [])
        if isinstance(t, dict) and t.get("type") == "custom" and isinstance(t.get("name"), str)
    )

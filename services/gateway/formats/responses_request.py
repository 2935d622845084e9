"""OpenAI Responses request → canonical chat messages and route fields: H-G4, X-1..X-5.

Nothing is stored, so a request must carry its whole conversation (`previous_response_id` and
`conversation` are refused). Function and custom tool calls become assistant `tool_calls`, their outputs
`tool` messages (a custom tool is a function taking one string `input`, RM-5); a call made in a namespace
takes the flattened name its tool is offered under (`responses_tools`). Codex's `agent_message` items (one
agent of a team writing to another) are user messages naming their author and recipient. Items a hosted
tool produced are left out (X-2): route mode names them in a header, a panel refuses them with the tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from services.gateway.formats.canonical import (
    Message,
    Part,
    add_tool_call,
    collapse,
    copy_fields,
    image_part,
    text_part,
    tool_call,
    tool_message,
)
from services.gateway.formats.common import object_list
from services.gateway.formats.responses_tools import ToolOffer, flat_name, tool_choice
from shared.refusal import Refusal

ROLES = ("user", "assistant", "system", "developer")
TEXT_PARTS = ("input_text", "output_text", "text")
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
SAMPLING = {"max_output_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p",
            "parallel_tool_calls": "parallel_tool_calls"}
# Items a vendor-hosted tool produced: left out of what a member reads.
HOSTED_ITEMS = frozenset({
    "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "computer_call",
    "computer_call_output", "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
    "apply_patch_call", "apply_patch_call_output", "mcp_call", "mcp_list_tools", "mcp_approval_request",
    "mcp_approval_response", "tool_search_call", "tool_search_output",
})
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
        elif kind == "encrypted_content" and isinstance(part.get("encrypted_content"), str):
            # Codex asks for some arguments "encrypted"; a member writes them plain, and they come back so
            parts.append(text_part(part["encrypted_content"]))
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
    """A call as the member sees it; one made in a namespace under its flattened name (even when this
    request no longer offers that tool: the name is a rule, not a lookup)."""
    name, call_id = item.get("name"), item.get("call_id") or item.get("id")
    if not isinstance(name, str) or not isinstance(call_id, str):
        raise Refusal(400, f'{where}: a {item["type"]} needs a "name" and a "call_id"')
    namespace = item.get("namespace")
    if isinstance(namespace, str) and namespace:
        name = flat_name(namespace, name)
    if item["type"] == "custom_tool_call":
        return tool_call(call_id, name, {"input": item.get("input", "")})
    return tool_call(call_id, name, item.get("arguments", "{}"))


class Conversation:
    """The messages as they build up. Images a tool returned wait for a user message after the run of tool
    messages, since OpenAI's tool messages carry text only and must follow their call directly; so does an
    agent message that arrives while calls are still being answered."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.tool_images: list[Part] = []
        self.held: list[Message] = []

    def flush(self) -> None:
        if self.tool_images:
            self.messages.append({"role": "user", "content": self.tool_images})
            self.tool_images = []
        self.messages += self.held
        self.held = []

    def message(self, where: str, item: dict[str, Any]) -> None:
        role = item.get("role")
        if role not in ROLES:
            raise Refusal(400, f"{where}.role must be one of {', '.join(ROLES)} (got {json.dumps(role)})")
        self.flush()
        self.messages.append({"role": role, "content": collapse(content_parts(where, item.get("content")))})

    def agent_message(self, where: str, item: dict[str, Any]) -> None:
        """Codex's note from one agent of a team to another: a user message led by who wrote to whom."""
        author, recipient = item.get("author"), item.get("recipient")
        lead = f"[agent message from {author if isinstance(author, str) else 'another agent'}"
        lead += f" to {recipient}]" if isinstance(recipient, str) else "]"
        parts = [text_part(lead), *content_parts(where, item.get("content") or [])]
        last = self.messages[-1] if self.messages else {}
        answering = last.get("role") == "tool" or bool(last.get("tool_calls"))
        (self.held if answering else self.messages).append({"role": "user", "content": collapse(parts)})

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
        if not isinstance(kind, str):
            raise Refusal(400, f'{where}: "type" must be a string, such as "message" or "function_call"')
        if kind == "message":
            talk.message(where, item)
        elif kind in CALLS:
            talk.call(where, item)
            agentic = agentic or f"tool calls (a {kind} item)"
        elif kind in OUTPUTS:
            talk.output(where, item)
            agentic = agentic or f"tool results (a {kind} item)"
        elif kind == "agent_message":
            talk.agent_message(where, item)
        elif kind in HOSTED_ITEMS:  # left out; route mode names it in X-Bench-Dropped-Items
            agentic = agentic or f"hosted tool items (a {kind} item)"
        elif kind != "reasoning":  # earlier reasoning is ignored everywhere
            raise Refusal(400, f"{where}: input items of type {json.dumps(kind)} are not supported "
                               "(messages, agent_message, function_call(_output), custom_tool_call(_output), "
                               "reasoning and items of hosted tools are; stored items are not)")
    talk.flush()
    return talk.messages, agentic


def response_format(text: Any) -> dict[str, Any] | None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") not in ("json_schema", "json_object"):
        return None
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    schema = {k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}
    return {"type": "json_schema", "json_schema": schema}


def route_fields(body: dict[str, Any], offer: ToolOffer) -> tuple[dict[str, Any], bool]:
    """RM-5's OpenAI fields with the tools `offer` makes, and whether the request declares tools (X-1: an
    empty list is no tools; a list of hosted tools alone is still tools, which a panel refuses)."""
    fields = copy_fields(body, SAMPLING)
    choice, fmt = tool_choice(body.get("tool_choice")), response_format(body.get("text"))
    if offer.tools:
        fields["tools"] = offer.tools
    if choice is not None:
        fields["tool_choice"] = choice
    if fmt is not None:
        fields["response_format"] = fmt
    return fields, offer.declared


def hosted_items(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The types of the input items a hosted tool produced, each once, in order (left out, X-2)."""
    raw = body.get("input")
    kinds = [i.get("type") for i in (raw if isinstance(raw, list) else []) if isinstance(i, dict)]
    return tuple(dict.fromkeys(k for k in kinds if k in HOSTED_ITEMS))

"""Anthropic Messages request → canonical chat messages and route fields: H-G5, X-1..X-5.

`tool_use` blocks become the assistant's `tool_calls`; `tool_result` blocks become `tool` messages right
after it (images a tool returned follow in a user message, `is_error` prefixes `Error: `). Server tools
(web search, code execution, MCP) run at Anthropic only, so they are refused in every mode (X-2).
"""

from __future__ import annotations

import json
from typing import Any

from services.gateway.formats.canonical import (
    Message,
    Part,
    collapse,
    data_url,
    function_tool,
    image_part,
    text_part,
    tool_call,
    tool_fields,
    tool_message,
)
from services.gateway.formats.common import object_list
from shared.refusal import Refusal

ROLES = ("user", "assistant")
REASONING = ("thinking", "redacted_thinking")  # earlier reasoning is ignored everywhere
SAMPLING = {
    "max_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p", "stop_sequences": "stop",
}
CHOICES = {"auto": "auto", "any": "required", "none": "none"}
BLOCKS = "text, image, tool_use, tool_result and thinking blocks are"


def refuse_block(where: str, kind: Any) -> Refusal:
    if isinstance(kind, str) and kind.endswith(("tool_use", "tool_result")):
        return Refusal(400, f"{where}: {kind} blocks belong to a server tool that only Anthropic can run; "
                            "this gateway serves client tools only")
    return Refusal(400, f"{where}: content blocks of type {json.dumps(kind)} are not supported ({BLOCKS})")


def text_of(where: str, block: dict[str, Any]) -> Part:
    if not isinstance(block.get("text"), str):
        raise Refusal(400, f'{where}: a text block needs a "text" string')
    return text_part(block["text"])


def image_of(where: str, block: dict[str, Any]) -> Part:
    """X-5: base64 → a data URL, url → the URL; any other source (a file id) cannot be read here."""
    source = block.get("source")
    if not isinstance(source, dict):
        source = {}
    kind = source.get("type")
    if kind == "base64":
        return image_part(data_url(source.get("media_type"), source.get("data"), where))
    if kind == "url":
        return image_part(source.get("url"))
    raise Refusal(400, f"{where}: an image source must be base64 or url (got {json.dumps(kind)}); this "
                       "gateway stores no files")


def result_of(where: str, block: dict[str, Any]) -> tuple[Message, list[Part]]:
    """A tool_result → the tool message and the images it returned."""
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        raise Refusal(400, f'{where}: a tool_result needs a "tool_use_id"')
    content = block.get("content")
    texts: list[str] = []
    images: list[Part] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for index, inner in enumerate(content):
            kind = inner.get("type") if isinstance(inner, dict) else None
            if kind == "text":
                texts.append(text_of(f"{where}.content[{index}]", inner)["text"])
            elif kind == "image":
                images.append(image_of(f"{where}.content[{index}]", inner))
            else:
                raise refuse_block(f"{where}.content[{index}]", kind)
    elif content is not None:
        raise Refusal(400, f"{where}: a tool_result's content must be a string or a list of blocks")
    text = "\n\n".join(texts)
    return tool_message(call_id, f"Error: {text}" if block.get("is_error") else text), images


def turn_messages(index: int, role: str, content: Any) -> tuple[list[Message], str]:
    """One Anthropic message → canonical messages, and why it makes an agent's turn ("" when it does not)."""
    where = f"messages[{index}]"
    if isinstance(content, str):
        return [{"role": role, "content": content}], ""
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise Refusal(400, f"{where}.content must be a string or a list of content blocks")
    parts: list[Part] = []
    calls: list[dict[str, Any]] = []
    results: list[Message] = []
    for number, block in enumerate(content):
        at, kind = f"{where}.content[{number}]", block.get("type")
        if kind == "text":
            parts.append(text_of(at, block))
        elif kind == "image":
            parts.append(image_of(at, block))
        elif kind == "tool_use" and role == "assistant":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise Refusal(400, f'{at}: a tool_use needs an "id" and a "name"')
            calls.append(tool_call(block["id"], block["name"], block.get("input")))
        elif kind == "tool_result" and role == "user":
            message, images = result_of(at, block)
            results.append(message)
            parts += images
        elif kind in ("tool_use", "tool_result"):
            home = "user" if kind == "tool_result" else "assistant"
            raise Refusal(400, f"{at}: {kind} blocks belong in {home} messages, not {role} ones")
        elif kind not in REASONING:
            raise refuse_block(at, kind)
    if calls:
        return [{"role": "assistant", "content": collapse(parts) if parts else None, "tool_calls": calls}], \
            "tool calls (a tool_use block)"
    out = list(results)
    if parts or not results:
        out.append({"role": role, "content": collapse(parts)})
    return out, "tool results (a tool_result block)" if results else ""


def system_text(system: Any) -> str:
    if system is None or isinstance(system, str):
        return system or ""
    if isinstance(system, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in system):
        return "\n\n".join(text_of("system", block)["text"] for block in system)
    raise Refusal(400, '"system" must be a string or a list of text blocks')


def request_messages(body: dict[str, Any]) -> tuple[list[Message], str]:
    """The system message first, then each turn; and why the request is an agent's turn."""
    raw = body.get("messages")
    raw = object_list(raw, "messages", "a list of message objects")
    system = system_text(body.get("system"))
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    agentic = ""
    for index, msg in enumerate(raw):
        role = msg.get("role")
        if role == "system":
            # Claude Code's mid-conversation system messages (a beta it always sends): kept in place.
            messages.append({"role": "system", "content": system_text(msg.get("content"))})
            continue
        if role not in ROLES:
            raise Refusal(400, f"messages[{index}].role must be user, assistant or system "
                               f"(got {json.dumps(role)})")
        turn, why = turn_messages(index, role, msg.get("content"))
        messages += turn
        agentic = agentic or why
    return messages, agentic


def chat_tool(index: int, tool: Any) -> dict[str, Any]:
    if not isinstance(tool, dict):
        raise Refusal(400, f"tools[{index}] must be an object")
    if tool.get("type") not in (None, "custom"):
        kind = json.dumps(tool["type"])
        raise Refusal(400, f"tools[{index}] is a server tool ({kind}) that only Anthropic can run; this "
                           "gateway serves client tools (no type, or custom) only")
    return function_tool(tool.get("name"), tool.get("description"), tool.get("input_schema"))


def tool_choice(choice: Any) -> dict[str, Any]:
    if not isinstance(choice, dict):
        return {}
    fields: dict[str, Any] = {}
    kind = choice.get("type")
    if isinstance(kind, str) and kind in CHOICES:
        fields["tool_choice"] = CHOICES[kind]
    elif kind == "tool" and isinstance(choice.get("name"), str):
        fields["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
    if choice.get("disable_parallel_tool_use") is True:
        fields["parallel_tool_calls"] = False
    return fields


def route_fields(body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """RM-5's OpenAI fields, and whether the request offers tools (X-1: an empty list is no tools)."""
    fields, has_tools = tool_fields(body, SAMPLING, chat_tool)
    return {**fields, **tool_choice(body.get("tool_choice"))}, has_tools

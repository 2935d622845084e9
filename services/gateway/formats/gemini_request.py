"""Gemini `generateContent` request → canonical chat messages and route fields: H-G9, X-1..X-5.

Gemini fields are read in camelCase and snake_case alike (REST clients send one, SDKs the other). Model
turns' `functionCall`s become `tool_calls` (numbered when they carry no id, RM-5); `functionResponse`s
become `tool` messages. Google-hosted tools (search, code execution, URL context) cannot run here (X-2).
"""

from __future__ import annotations

import json
import re
from typing import Any

from services.gateway.formats.canonical import (
    CallNumbers,
    Message,
    Part,
    collapse,
    data_url,
    function_tool,
    image_part,
    text_part,
    tool_call,
    tool_message,
)
from services.gateway.formats.common import object_list
from shared.refusal import Refusal

ROLES = {"user": "user", "model": "assistant", "function": "user"}
HOSTED_PARTS = ("executableCode", "codeExecutionResult")
PART_KINDS = ("text", "inlineData", "fileData", "functionCall", "functionResponse", *HOSTED_PARTS)
SAMPLING = {
    "maxOutputTokens": "max_tokens", "temperature": "temperature", "topP": "top_p", "stopSequences": "stop",
}
CALLING_MODES = {"NONE": "none", "AUTO": "auto"}
THOUGHT_KEYS = ("thought", "thought_signature")


def snake(camel: str) -> str:
    return re.sub(r"([A-Z])", r"_\1", camel).lower()


def get(obj: Any, camel: str) -> Any:
    """A field by its camelCase or snake_case name."""
    if not isinstance(obj, dict):
        return None
    return obj[camel] if camel in obj else obj.get(snake(camel))


def part_kind(where: str, part: Any) -> str:
    """Which content a part carries; "" for a part carrying only earlier reasoning (a thought signature)."""
    kind = next((k for k in PART_KINDS if get(part, k) is not None), None)
    if kind is None and isinstance(part, dict) and part and all(snake(k) in THOUGHT_KEYS for k in part):
        return ""
    if kind is None:
        raise Refusal(400, f"{where}: unknown part shape (text, inlineData, fileData, functionCall and "
                           "functionResponse parts are served)")
    if kind in HOSTED_PARTS:
        raise Refusal(400, f"{where}: {kind} parts come from Google's code execution, which this gateway "
                           "cannot run")
    return kind


def image_of(where: str, kind: str, data: Any) -> Part:
    """X-5: inline bytes → a data URL; `fileData` only at an http(s) URL (no Files API here)."""
    if not isinstance(data, dict):
        raise Refusal(400, f"{where}.{kind} must be an object")
    mime = get(data, "mimeType")
    if kind == "inlineData":
        return image_part(data_url(mime, get(data, "data"), where))
    uri = get(data, "fileUri")
    if not isinstance(uri, str) or not uri.lower().startswith(("http://", "https://")):
        raise Refusal(400, f"{where}: fileData must point at an http(s) URL; uploaded files (the Files API) "
                           "cannot be read by this gateway")
    if mime is not None and not (isinstance(mime, str) and mime.lower().startswith("image/")):
        raise Refusal(400, f"{where}: only images can be sent (media type {json.dumps(mime)} is not one)")
    return image_part(uri)


def turn_messages(where: str, role: str, parts: list[Any], numbers: CallNumbers) -> tuple[list[Message], str]:
    """One Content → canonical messages, and why it makes an agent's turn ("" when it does not)."""
    content: list[Part] = []
    calls: list[dict[str, Any]] = []
    results: list[Message] = []
    for index, part in enumerate(parts):
        at = f"{where}.parts[{index}]"
        kind = part_kind(at, part)
        value = get(part, kind)
        if not kind:  # earlier reasoning is ignored everywhere
            continue
        if kind == "text":
            if not isinstance(value, str):
                raise Refusal(400, f'{at}: "text" must be a string')
            if get(part, "thought") is not True:  # earlier reasoning is ignored everywhere
                content.append(text_part(value))
        elif kind in ("inlineData", "fileData"):
            content.append(image_of(at, kind, value))
        elif (kind == "functionCall") != (role == "model"):
            home = "model" if kind == "functionCall" else "user or function"
            raise Refusal(400, f"{at}: {kind} parts belong in {home} turns, not {role} ones")
        elif not isinstance(value, dict) or not isinstance(value.get("name"), str):
            raise Refusal(400, f'{at}: a {kind} needs a "name"')
        elif kind == "functionCall":
            call_id = numbers.call(value["name"], value.get("id"))
            calls.append(tool_call(call_id, value["name"], value.get("args")))
        else:
            call_id = numbers.result(value["name"], value.get("id"))
            results.append(tool_message(call_id, json.dumps(value.get("response"), ensure_ascii=False)))
    if calls:
        said = collapse(content) if content else None
        message = {"role": "assistant", "content": said, "tool_calls": calls}
        return [message], "tool calls (a functionCall part)"
    out = list(results)
    if content or not results:
        out.append({"role": ROLES[role], "content": collapse(content)})
    return out, "tool results (a functionResponse part)" if results else ""


def system_text(instruction: Any) -> str:
    if instruction is None or isinstance(instruction, str):
        return instruction or ""
    parts = get(instruction, "parts")
    if isinstance(parts, list) and all(isinstance(get(p, "text"), str) for p in parts):
        return "\n\n".join(get(p, "text") for p in parts)
    raise Refusal(400, '"systemInstruction" must be a string or a content of text parts')


def request_messages(body: dict[str, Any], require: bool = True) -> tuple[list[Message], str]:
    """The system instruction, then each turn; and why the request is an agent's turn."""
    contents = get(body, "contents")
    if isinstance(contents, dict):
        contents = [contents]
    if contents is None and not require:
        contents = []
    contents = object_list(contents, "contents", "a content object or a list of them", require)
    system = system_text(get(body, "systemInstruction"))
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    numbers, agentic = CallNumbers(), ""
    for index, content in enumerate(contents):
        where, role = f"contents[{index}]", content.get("role")
        role = "user" if role in (None, "") else role  # a turn without a role is the user's
        if not isinstance(role, str) or role not in ROLES:
            raise Refusal(400, f"{where}.role must be user, model or function (got {json.dumps(role)})")
        parts = content.get("parts")
        if not isinstance(parts, list):
            raise Refusal(400, f'{where}: "parts" must be a list')
        turn, why = turn_messages(where, role, parts, numbers)
        messages += turn
        agentic = agentic or why
    return messages, agentic


def lowered(schema: Any) -> Any:
    """Gemini's OpenAPI schemas write types upper-case (`STRING`); JSON Schema wants them lower-case."""
    if isinstance(schema, list):
        return [lowered(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: v.lower() if k == "type" and isinstance(v, str) else lowered(v) for k, v in schema.items()}


def chat_tools(tools: list[Any]) -> list[dict[str, Any]]:
    """X-2: only `functionDeclarations`; anything else (search, code execution…) runs at Google only."""
    out = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise Refusal(400, f"tools[{index}] must be an object")
        hosted = [k for k in tool if k not in ("functionDeclarations", "function_declarations")]
        if hosted:
            raise Refusal(400, f"tools[{index}] asks for {', '.join(hosted)}, which only Google can run; "
                               "this gateway serves functionDeclarations only")
        declarations = get(tool, "functionDeclarations") or []
        if not isinstance(declarations, list):
            raise Refusal(400, f"tools[{index}].functionDeclarations must be a list")
        for fn in declarations:
            schema = get(fn, "parametersJsonSchema")
            schema = lowered(get(fn, "parameters")) if schema is None else schema
            out.append(function_tool(get(fn, "name"), get(fn, "description"), schema))
    return out


def tool_choice(config: Any) -> Any:
    calling = get(config, "functionCallingConfig")
    mode = get(calling, "mode")
    if isinstance(mode, str) and mode in CALLING_MODES:
        return CALLING_MODES[mode]
    if mode in ("ANY", "VALIDATED"):
        allowed = get(calling, "allowedFunctionNames")
        if isinstance(allowed, list) and len(allowed) == 1:
            return {"type": "function", "function": {"name": allowed[0]}}
        return "required"
    return None


def response_format(config: Any) -> dict[str, Any] | None:
    if get(config, "responseMimeType") != "application/json":
        return None
    schema = get(config, "responseJsonSchema")
    schema = lowered(get(config, "responseSchema")) if schema is None else schema
    if schema is None:
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}


def route_fields(body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """RM-5's OpenAI fields, and whether the request offers tools (X-1: no declarations is no tools)."""
    tools = get(body, "tools")
    if tools is not None and not isinstance(tools, list):
        raise Refusal(400, '"tools" must be a list')
    config = get(body, "generationConfig")
    fields = {name: get(config, key) for key, name in SAMPLING.items() if get(config, key) is not None}
    declared = chat_tools(tools or [])
    if declared:
        fields["tools"] = declared
    choice, fmt = tool_choice(get(body, "toolConfig")), response_format(config)
    if choice is not None:
        fields["tool_choice"] = choice
    if fmt is not None:
        fields["response_format"] = fmt
    return fields, bool(declared)

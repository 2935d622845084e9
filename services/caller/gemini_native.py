"""Gemini's native API (C-3 `gemini`): `streamGenerateContent?alt=sse` and how its chunks become an outcome.

Gemini has no end-of-stream marker: a stream is whole when a candidate said why it finished. Pure.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from services.caller.chat_parts import (
    Image,
    alternating,
    arguments_object,
    forced_tool,
    function_tools,
    pieces_of,
    system_text,
    text_of_parts,
    tool_call_id,
    tool_calls_of,
    turns,
)
from services.caller.outcome import CallOutcome, ToolCall, Usage
from services.caller.stream_fold import StreamFold
from services.caller.wire import (
    UpstreamRequest,
    auth_headers,
    base_headers,
    endpoint_url,
    error_object_text,
    json_object,
    output_budget,
    stop_list,
)
from shared.commands import Msg, SeatCall

GENERATION = {"temperature": "temperature", "top_p": "topP", "top_k": "topK", "seed": "seed",
              "presence_penalty": "presencePenalty", "frequency_penalty": "frequencyPenalty"}
FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}
# JSON-schema words Gemini's function declarations refuse.
SCHEMA_DROPPED = ("$schema", "additionalProperties", "strict")
MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}


def model_path(served: str) -> str:
    return quote(served.removeprefix("models/"), safe="/-_.")


def build_request(call: SeatCall, key: str | None) -> UpstreamRequest:
    headers = base_headers(call.headers)
    headers.update(auth_headers("gemini", key))
    body: dict[str, Any] = {"contents": contents_of(call.messages)}
    system = system_text(call.messages)
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    config = generation_config(call.options)
    if config:
        body["generationConfig"] = config
    body.update(tools_of(call.options))
    url = endpoint_url(call.base, f"models/{model_path(call.served)}:streamGenerateContent?alt=sse")
    return UpstreamRequest(url=url, headers=headers, body=body)


def generation_config(options: dict[str, Any]) -> dict[str, Any]:
    config = {ours: options[theirs] for theirs, ours in GENERATION.items() if options.get(theirs) is not None}
    budget = output_budget(options)
    if budget:
        config["maxOutputTokens"] = budget
    stops = stop_list(options.get("stop"))
    if stops:
        config["stopSequences"] = stops
    return config


def clean_schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: clean_schema(v) for k, v in schema.items() if k not in SCHEMA_DROPPED}
    if isinstance(schema, list):
        return [clean_schema(v) for v in schema]
    return schema


def tools_of(options: dict[str, Any]) -> dict[str, Any]:
    declarations = []
    for f in function_tools(options):
        declaration = {"name": f["name"], "description": f.get("description", "")}
        if f.get("parameters"):
            declaration["parameters"] = clean_schema(f["parameters"])
        declarations.append(declaration)
    if not declarations:
        return {}
    found: dict[str, Any] = {"tools": [{"functionDeclarations": declarations}]}
    choice = options.get("tool_choice")
    named = forced_tool(choice)
    if named:
        found["toolConfig"] = {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [named]}}
    elif isinstance(choice, str) and choice in MODES:
        found["toolConfig"] = {"functionCallingConfig": {"mode": MODES[choice]}}
    return found


def image_part(image: Image) -> dict[str, Any]:
    if image.data:
        return {"inlineData": {"mimeType": image.media_type, "data": image.data}}
    return {"fileData": {"mimeType": image.media_type, "fileUri": image.url}}


def parts_for(message: Msg, tool_names: dict[str, str]) -> list[dict[str, Any]]:
    if message.role == "tool":
        name = tool_names.get(tool_call_id(message), "tool")
        return [{"functionResponse": {"name": name, "response": {"content": text_of_parts(message.content)}}}]
    parts = [image_part(piece) if isinstance(piece, Image) else {"text": piece}
             for piece in pieces_of(message.content)]
    for asked in tool_calls_of(message):
        tool_names[asked.id] = asked.name
        parts.append({"functionCall": {"name": asked.name, "args": arguments_object(asked.arguments)}})
    return parts


def contents_of(messages: list[Msg]) -> list[dict[str, Any]]:
    """Turns as `user`/`model` contents; a tool result is a user turn naming the function it answers."""
    tool_names: dict[str, str] = {}
    return alternating((("model" if m.role == "assistant" else "user", parts_for(m, tool_names))
                        for m in turns(messages)), "parts")


def usage_of(meta: dict[str, Any]) -> Usage:
    """Thinking tokens count as output, as OpenAI's completion tokens include reasoning."""
    thoughts = int(meta.get("thoughtsTokenCount") or 0)
    return Usage(tokens_in=int(meta.get("promptTokenCount") or 0),
                 tokens_out=int(meta.get("candidatesTokenCount") or 0) + thoughts,
                 reasoning=thoughts, cached=int(meta.get("cachedContentTokenCount") or 0))


class StreamParser(StreamFold):
    """Each `data:` line is a whole GenerateContentResponse; the last usageMetadata is the call's.

    `done` stays False: usage may follow the finishReason, so the stream is read to its end.
    """

    def __init__(self) -> None:
        super().__init__()
        self.finished = False

    def _fold(self, event: dict[str, Any]) -> None:
        self.fold(event, "mid-stream")

    def fold(self, chunk: dict[str, Any], where: str) -> None:
        if chunk.get("error"):
            self.outcome.error = error_object_text(chunk["error"], where)
            return
        blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            self.outcome.error = error_object_text({"promptFeedback": chunk["promptFeedback"]}, where)
            return
        if chunk.get("modelVersion"):
            self.outcome.model = str(chunk["modelVersion"])
        if isinstance(chunk.get("usageMetadata"), dict):
            self.outcome.usage = usage_of(chunk["usageMetadata"])
        candidates = chunk.get("candidates") or []
        if candidates and isinstance(candidates[0], dict):
            self._candidate(candidates[0], where)

    def _candidate(self, candidate: dict[str, Any], where: str) -> None:
        for part in (candidate.get("content") or {}).get("parts") or []:
            if "functionCall" in part:
                call = part["functionCall"] or {}
                self.outcome.tool_calls.append(ToolCall(
                    id=str(call.get("id") or f"call_{len(self.outcome.tool_calls) + 1}"),
                    name=str(call.get("name", "")), arguments=json.dumps(call.get("args") or {})))
            elif isinstance(part.get("text"), str):
                (self._reasoning if part.get("thought") else self._text).append(part["text"])
        reason = candidate.get("finishReason")
        if not reason:
            return
        self.finished = True
        if reason in FINISH:
            self.outcome.finish = "tool_calls" if self.outcome.tool_calls else FINISH[reason]
        else:  # SAFETY, RECITATION, PROHIBITED_CONTENT, MALFORMED_FUNCTION_CALL, OTHER…: no usable answer
            self.outcome.finish = "error"
            self.outcome.error = error_object_text({"finishReason": reason}, where)

    def finish(self) -> CallOutcome:
        return self._whole(self.finished, "a finishReason")


def parse_plain(raw: bytes) -> CallOutcome:
    """A JSON reply: one response object, or the array `streamGenerateContent` gives without `alt=sse`."""
    data, failed = json_object(raw)
    if failed is not None:
        return failed
    parser = StreamParser()
    for chunk in data if isinstance(data, list) else [data]:
        if isinstance(chunk, dict) and not parser.outcome.error:
            parser.fold(chunk, "in a 200 reply")
    return parser.finish()

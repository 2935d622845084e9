"""Each API kind's stream as OpenAI `chat.completion.chunk`s, for route mode's relay (RM-5, RM-7). Pure.

The gateway reads one member language, OpenAI chat chunks. A chat member's chunks go on as it sent them
(tool-call deltas byte for byte); the other kinds' events are translated where the mapping is sound: text,
reasoning, each tool call (opened with its id and name, then its argument pieces), the finish reason and
the usage. Errors are not translated: the kind's own parser judges how the stream ended.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, Protocol

from services.caller import anthropic_messages, gemini_native, openai_responses
from services.caller.outcome import CallOutcome, Usage
from services.caller.wire import sse_payload

Chunk = dict[str, Any]


def usage_json(usage: Usage) -> dict[str, Any]:
    """Our usage in OpenAI's shape (what the gateway reads back)."""
    return {
        "prompt_tokens": usage.tokens_in, "completion_tokens": usage.tokens_out,
        "total_tokens": usage.tokens_in + usage.tokens_out,
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning},
        "prompt_tokens_details": {"cached_tokens": usage.cached},
    }


class ChunkMaker:
    """Chunks of one translated stream: one id and `created` for all, as an OpenAI stream has."""

    def __init__(self) -> None:
        self.id = f"chatcmpl-{secrets.token_hex(12)}"
        self.created = int(time.time())
        self.model = ""

    def chunk(self, delta: dict[str, Any] | None = None, finish: str | None = None,
              usage: Usage | None = None) -> Chunk:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        out: Chunk = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                      "model": self.model, "choices": choices}
        if usage is not None:
            out["usage"] = usage_json(usage)
        return out

    def call_opened(self, index: int, call_id: str, name: str, arguments: str = "") -> Chunk:
        call = {"index": index, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": arguments}}
        return self.chunk({"tool_calls": [call]})

    def call_arguments(self, index: int, piece: str) -> Chunk:
        return self.chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})


class Translator(Protocol):
    def feed_line(self, line: str) -> list[Chunk]: ...


def payload_of(line: str) -> dict[str, Any] | None:
    """The JSON object of an SSE `data:` line, or None (a blank line, a comment, `[DONE]`, not JSON)."""
    data = sse_payload(line)
    if not data or data == "[DONE]":
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class ChatChunks:
    """OpenAI chat: the member's own chunks, untouched (an error chunk is left to the parser)."""

    def feed_line(self, line: str) -> list[Chunk]:
        chunk = payload_of(line)
        return [] if chunk is None or chunk.get("error") else [chunk]


class AnthropicChunks:
    """message_start → content blocks (text, thinking, tool_use with input_json_delta) → message_delta."""

    def __init__(self) -> None:
        self.make = ChunkMaker()
        self.calls: dict[int, int] = {}  # content block index → tool-call index
        self.usage = Usage()

    def feed_line(self, line: str) -> list[Chunk]:
        event = payload_of(line)
        if event is None:
            return []
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.make.model = str(message.get("model") or "")
            self.usage = anthropic_messages.usage_of(message.get("usage") or {})
            return [self.make.chunk({"role": "assistant", "content": ""})]
        if kind == "content_block_start":
            return self.block_start(int(event.get("index", 0)), event.get("content_block") or {})
        if kind == "content_block_delta":
            return self.block_delta(int(event.get("index", 0)), event.get("delta") or {})
        if kind == "message_delta":
            produced = (event.get("usage") or {}).get("output_tokens")
            if produced is not None:
                self.usage.tokens_out = int(produced)
            stop = (event.get("delta") or {}).get("stop_reason")
            if not isinstance(stop, str):
                return []
            return [self.make.chunk({}, anthropic_messages.FINISH.get(stop, stop))]
        if kind == "message_stop":
            return [self.make.chunk(None, usage=self.usage)]
        return []

    def block_start(self, index: int, block: dict[str, Any]) -> list[Chunk]:
        if block.get("type") == "tool_use":
            self.calls[index] = len(self.calls)
            preset = block.get("input")
            arguments = json.dumps(preset, ensure_ascii=False) if preset else ""
            return [self.make.call_opened(self.calls[index], str(block.get("id", "")),
                                          str(block.get("name", "")), arguments)]
        if block.get("type") == "text" and block.get("text"):
            return [self.make.chunk({"content": block["text"]})]
        return []

    def block_delta(self, index: int, delta: dict[str, Any]) -> list[Chunk]:
        kind = delta.get("type")
        if kind == "text_delta":
            return [self.make.chunk({"content": str(delta.get("text", ""))})]
        if kind == "thinking_delta":
            return [self.make.chunk({"reasoning_content": str(delta.get("thinking", ""))})]
        if kind == "input_json_delta" and index in self.calls:
            return [self.make.call_arguments(self.calls[index], str(delta.get("partial_json", "")))]
        return []


class ResponsesChunks:
    """Typed events: text and reasoning deltas, function calls by output item, then the final response."""

    def __init__(self) -> None:
        self.make = ChunkMaker()
        self.calls: dict[str, int] = {}  # output item id → tool-call index
        self.with_arguments: set[str] = set()  # items whose arguments came as deltas

    def feed_line(self, line: str) -> list[Chunk]:
        event = payload_of(line)
        if event is None:
            return []
        kind, response = openai_responses.kind_and_response(event)
        if response.get("model"):
            self.make.model = str(response["model"])
        if kind == "response.output_text.delta":
            return [self.make.chunk({"content": str(event.get("delta", ""))})]
        if kind in openai_responses.REASONING_DELTAS:
            return [self.make.chunk({"reasoning_content": str(event.get("delta", ""))})]
        if kind in ("response.output_item.added", "response.output_item.done"):
            return self.item(event.get("item") or {}, done=kind.endswith("done"))
        if kind == "response.function_call_arguments.delta":
            key = str(event.get("item_id", ""))
            if key not in self.calls:
                return []
            self.with_arguments.add(key)
            return [self.make.call_arguments(self.calls[key], str(event.get("delta", "")))]
        if kind in openai_responses.ENDINGS:
            return self.end(response)
        return []

    def item(self, item: dict[str, Any], done: bool) -> list[Chunk]:
        if item.get("type") != "function_call":
            return []
        key = str(item.get("id") or item.get("call_id") or "")
        raw = item.get("arguments")
        arguments = raw if isinstance(raw, str) else ""
        if key not in self.calls:
            self.calls[key] = len(self.calls)
            call_id = str(item.get("call_id") or key)
            if done:
                self.with_arguments.add(key)
            return [self.make.call_opened(self.calls[key], call_id, str(item.get("name", "")), arguments)]
        if done and arguments and key not in self.with_arguments:
            self.with_arguments.add(key)
            return [self.make.call_arguments(self.calls[key], arguments)]
        return []

    def end(self, response: dict[str, Any]) -> list[Chunk]:
        reason = (response.get("incomplete_details") or {}).get("reason")
        if response.get("status") == "incomplete":
            finish = "length" if reason == "max_output_tokens" else str(reason or "stop")
        else:
            finish = "tool_calls" if self.calls else "stop"
        out = [self.make.chunk({}, finish)]
        raw = response.get("usage")
        if isinstance(raw, dict):
            out.append(self.make.chunk(None, usage=openai_responses.usage_of(raw)))
        return out


class GeminiChunks:
    """Each `data:` line is a whole GenerateContentResponse: its parts, its finish reason, its usage. Gemini
    sends each function call whole and, before its v1beta ids, without an id: numbered `call_<n>`."""

    def __init__(self) -> None:
        self.make = ChunkMaker()
        self.calls = 0

    def feed_line(self, line: str) -> list[Chunk]:
        chunk = payload_of(line)
        if chunk is None or chunk.get("error"):
            return []
        if chunk.get("modelVersion"):
            self.make.model = str(chunk["modelVersion"])
        out: list[Chunk] = []
        candidates = chunk.get("candidates") or []
        candidate = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
        for part in (candidate.get("content") or {}).get("parts") or []:
            out += self.part(part)
        reason = candidate.get("finishReason")
        if reason in gemini_native.FINISH:
            out.append(self.make.chunk({}, "tool_calls" if self.calls else gemini_native.FINISH[reason]))
        meta = chunk.get("usageMetadata")
        if isinstance(meta, dict):
            out.append(self.make.chunk(None, usage=gemini_native.usage_of(meta)))
        return out

    def part(self, part: dict[str, Any]) -> list[Chunk]:
        if "functionCall" in part:
            call = part["functionCall"] or {}
            index = self.calls
            self.calls += 1
            arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
            return [self.make.call_opened(index, str(call.get("id") or f"call_{index}"),
                                          str(call.get("name", "")), arguments)]
        if isinstance(part.get("text"), str) and part["text"]:
            key = "reasoning_content" if part.get("thought") else "content"
            return [self.make.chunk({key: part["text"]})]
        return []


TRANSLATORS: dict[str, type[ChatChunks | AnthropicChunks | ResponsesChunks | GeminiChunks]] = {
    "chat": ChatChunks, "anthropic": AnthropicChunks, "responses": ResponsesChunks, "gemini": GeminiChunks,
}


def translator_for(api: str) -> Translator:
    return TRANSLATORS[api]()


def chunks_of_outcome(outcome: CallOutcome) -> list[Chunk]:
    """A whole (not streamed) reply as the chunks a stream of it would have been."""
    make = ChunkMaker()
    make.model = outcome.model
    delta: dict[str, Any] = {"role": "assistant", "content": outcome.text}
    if outcome.reasoning:
        delta["reasoning_content"] = outcome.reasoning
    if outcome.tool_calls:
        delta["tool_calls"] = [
            {"index": n, "id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": call.arguments}}
            for n, call in enumerate(outcome.tool_calls)
        ]
    finish = outcome.finish or ("tool_calls" if outcome.tool_calls else "stop")
    out = [make.chunk(delta), make.chunk({}, finish)]
    if outcome.usage is not None:
        out.append(make.chunk(None, usage=outcome.usage))
    return out

"""A member's OpenAI chat stream, folded as it arrives (RM-6, RM-7).

`TurnAssembly` keeps the text so far, the reasoning, each tool call assembled from its deltas by `index`
(parallel calls whose deltas interleave come out as separate whole calls, A-52), the finish reason and
the member's usage. `MemberStream` adds what failover needs: nothing is passed on until the first piece
(text or a tool call; reasoning alone is not one and is held back with everything before it), so a member
that fails before it can be replaced without the client seeing a byte of it.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from services.gateway.panel.flatten import estimate_text

Chunk = dict[str, Any]  # one parsed `chat.completion.chunk` as the member sent it


@dataclass(frozen=True)
class Usage:
    """The member's own counts (its usage chunk); absent when it sent none."""

    tokens_in: int
    tokens_out: int
    reasoning: int = 0
    cached: int = 0

    @classmethod
    def from_openai(cls, usage: dict[str, Any]) -> Usage:
        completion = usage.get("completion_tokens_details") or {}
        prompt = usage.get("prompt_tokens_details") or {}
        return cls(
            tokens_in=_count(usage.get("prompt_tokens")), tokens_out=_count(usage.get("completion_tokens")),
            reasoning=_count(completion.get("reasoning_tokens") if isinstance(completion, dict) else 0),
            cached=_count(prompt.get("cached_tokens") if isinstance(prompt, dict) else 0),
        )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class ToolCall:
    """One whole tool call; `arguments` is the JSON text exactly as the member wrote it."""

    id: str
    name: str
    arguments: str

    def arguments_object(self) -> dict[str, Any]:
        """RM-7: the arguments as an object; anything else is wrapped as `{"arguments": <value>}`."""
        if not self.arguments.strip():
            return {}
        try:
            value = json.loads(self.arguments)
        except ValueError:
            return {"arguments": self.arguments}
        return value if isinstance(value, dict) else {"arguments": value}

    def arguments_json(self) -> str:
        """The arguments as a JSON object's text: the member's own text when it is one."""
        if _is_object(self.arguments):
            return self.arguments
        return json.dumps(self.arguments_object(), ensure_ascii=False)


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


@dataclass(frozen=True)
class TurnSummary:
    """What a member answered, once its stream ended: what every format's reply is built from."""

    text: str
    reasoning: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: Usage | None
    response_id: str = ""  # the member's chunk id, kept for the OpenAI chat closing chunk

    @property
    def empty(self) -> bool:
        """RM-6: neither text nor a tool call, even after reasoning."""
        return not self.text and not self.tool_calls

    @property
    def cut(self) -> bool:
        """The member stopped at its output budget."""
        return self.finish_reason == "length"

    def output_estimate(self) -> int:
        """P-5 estimate of what the member wrote, for formats that must show a count it did not give."""
        return estimate_text(self.text + "".join(call.arguments for call in self.tool_calls))


def delta_of(chunk: Chunk) -> dict[str, Any]:
    """The first choice's delta (a member asked with n=1 sends one choice), or {} for a usage chunk."""
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return {}
    delta = choices[0].get("delta")
    return delta if isinstance(delta, dict) else {}


def finish_of(chunk: Chunk) -> str | None:
    choices = chunk.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        finish = choices[0].get("finish_reason")
        return finish if isinstance(finish, str) else None
    return None


def text_of(delta: dict[str, Any]) -> str:
    """A delta's text: a string, or (a few providers) a list of text parts."""
    content = delta.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def reasoning_of(delta: dict[str, Any]) -> str:
    """Providers name it `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama)."""
    value = delta.get("reasoning_content") or delta.get("reasoning")
    return value if isinstance(value, str) else ""


def error_of(chunk: Chunk) -> str:
    """A mid-stream error (an `error` object, or `finish_reason: "error"`), as text; "" when none."""
    error = chunk.get("error")
    if error:
        if isinstance(error, dict):
            message = error.get("message") or json.dumps(error, ensure_ascii=False)
            code = error.get("code")
            return f"{message} (code {code})" if code not in (None, "") else str(message)
        return str(error)
    if finish_of(chunk) == "error":
        return "the member ended its stream with finish_reason error"
    return ""


@dataclass
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class TurnAssembly:
    """Every chunk of one member's stream, folded."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _CallParts] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.error = ""  # the first mid-stream error the member sent
        self.response_id = ""

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    @property
    def first_piece(self) -> bool:
        """RM-6: text or a tool call has arrived (reasoning alone does not count)."""
        return bool(self._calls) or any(self._text)

    @property
    def anything(self) -> bool:
        """Text, reasoning or a tool call has arrived: the member is not silent (the 90 s window)."""
        return self.first_piece or any(self._reasoning)

    def add(self, chunk: Chunk) -> None:
        if self.error:
            return
        self.error = error_of(chunk)
        if self.error:
            return
        if isinstance(chunk.get("id"), str) and not self.response_id:
            self.response_id = chunk["id"]
        if isinstance(chunk.get("usage"), dict):
            self.usage = Usage.from_openai(chunk["usage"])
        delta = delta_of(chunk)
        self._text.append(text_of(delta))
        self._reasoning.append(reasoning_of(delta))
        for raw in delta.get("tool_calls") or []:
            if isinstance(raw, dict):
                self._add_call(raw)
        self.finish_reason = finish_of(chunk) or self.finish_reason

    def _add_call(self, raw: dict[str, Any]) -> None:
        """Deltas are matched by `index`. Without one (a few providers), a delta carrying a new id starts a
        call and any other continues the last one."""
        index = raw.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            last = max(self._calls, default=-1)
            new_id = isinstance(raw.get("id"), str) and (last < 0 or raw["id"] != self._calls[last].id)
            index = last + 1 if new_id or last < 0 else last
        parts = self._calls.setdefault(index, _CallParts())
        function = raw.get("function")
        if not isinstance(function, dict):
            function = {}
        parts.id = parts.id or (raw["id"] if isinstance(raw.get("id"), str) else "")
        parts.name = parts.name or (function["name"] if isinstance(function.get("name"), str) else "")
        if isinstance(function.get("arguments"), str):
            parts.arguments.append(function["arguments"])

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls in index order; a call the member sent without an id gets one (kept from then on), so
        its result can be matched when the client sends it back."""
        for parts in self._calls.values():
            parts.id = parts.id or f"call_{secrets.token_hex(12)}"
        return tuple(
            ToolCall(id=parts.id, name=parts.name, arguments="".join(parts.arguments))
            for _, parts in sorted(self._calls.items())
        )

    def summary(self) -> TurnSummary:
        return TurnSummary(
            text=self.text, reasoning=self.reasoning, tool_calls=self.tool_calls(),
            finish_reason=self.finish_reason, usage=self.usage, response_id=self.response_id,
        )


class MemberStream:
    """One member's stream on its way to the client: chunks are held back until the first piece, then
    passed on as they come. `feed` returns the chunks to pass on now (the held ones first)."""

    def __init__(self) -> None:
        self.assembly = TurnAssembly()
        self._held: list[Chunk] = []
        self.live = False

    def feed(self, chunk: Chunk) -> list[Chunk]:
        self.assembly.add(chunk)
        if self.assembly.error:
            return []  # never relayed: the desk fails over, or ends the stream in the format's error
        if self.live:
            return [chunk]
        self._held.append(chunk)
        if not self.assembly.first_piece:
            return []
        self.live = True
        out, self._held = self._held, []
        return out

    def release(self) -> list[Chunk]:
        """The chunks still held when the stream ends without a first piece: the last member's empty
        reply is its answer (RM-6), so what it sent (a role chunk, a finish, usage) is passed on."""
        out, self._held = self._held, []
        return out

    @property
    def error(self) -> str:
        return self.assembly.error

    def summary(self) -> TurnSummary:
        return self.assembly.summary()

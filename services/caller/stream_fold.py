"""What the native parsers (Anthropic, Gemini, Responses) share: SSE lines to JSON events, text and
reasoning pieces joined once the stream ends, tool calls whose arguments arrive in pieces. Pure."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from services.caller.outcome import CallOutcome, ToolCall, client_failed
from services.caller.wire import json_object, sse_payload, stream_event

Key = TypeVar("Key", int, str)


class StreamFold(ABC):
    """One streamed reply folded event by event; a subclass says what each event means."""

    markers: tuple[str, ...] = ()  # payloads that only mark the stream (no JSON event behind them)

    def __init__(self) -> None:
        self.outcome = CallOutcome()
        self.done = False
        self._text: list[str] = []
        self._reasoning: list[str] = []

    def feed_line(self, line: str) -> None:
        payload = sse_payload(line)
        if self.outcome.error or self.done or not payload or payload in self.markers:
            return
        event = stream_event(payload, self.outcome)
        if event is not None:
            self._fold(event)

    @abstractmethod
    def _fold(self, event: dict[str, Any]) -> None: ...

    def _whole(self, ended: bool, end: str) -> CallOutcome:
        """The outcome with its pieces joined; a stream that never reached `end` is a cut one."""
        out = self.outcome
        out.text, out.reasoning = "".join(self._text), "".join(self._reasoning)
        if not out.error and not ended:
            out.error = f"Error: client failed: stream cut before {end}"
        return out


class ToolPieces(Generic[Key]):
    """Tool calls by the key their stream names them with; each one's argument JSON arrives in pieces."""

    def __init__(self) -> None:
        self.calls: dict[Key, ToolCall] = {}
        self.args: dict[Key, list[str]] = {}

    def whole(self, keys: Iterable[Key]) -> list[ToolCall]:
        """The calls in the order of `keys`, arguments joined (`{}` for a call that sent none)."""
        found = []
        for key in keys:
            call = self.calls[key]
            call.arguments = "".join(self.args.get(key, [])) or "{}"
            found.append(call)
        return found


def reply_object(raw: bytes) -> tuple[dict[str, Any], CallOutcome | None]:
    """A plain reply's JSON object, or the client failure saying why there is none."""
    data, failed = json_object(raw)
    if failed is not None:
        return {}, failed
    if not isinstance(data, dict):
        return {}, client_failed("non-JSON reply: not an object")
    return data, None

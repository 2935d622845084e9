"""The seam every route-mode encoder implements (RM-7): one turn's reply in the request's own format.

Streamed, the transport writes `start()` with the 200, then `chunk()` for each member chunk the
`MemberStream` passes on, `keepalive()` after silence, and `finish()` (or `error()` if the turn fails after
the 200). Not streamed, `reply()` gives the whole body and the headers. An encoder serves one turn.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.gateway.formats.base import Reply
from services.gateway.route_mode.assemble import Chunk, TurnSummary
from services.gateway.route_mode.bench import route_headers

DROPPED_TOOLS_HEADER = "X-Bench-Dropped-Tools"
DROPPED_ITEMS_HEADER = "X-Bench-Dropped-Items"


@dataclass(frozen=True)
class RouteContext:
    """What an encoder needs of the request."""

    format: str  # the format module's `name`
    collection: str  # bench/<c>: the name OpenAI chat shows
    model: str  # the model as asked: the name every other format shows
    input_estimate: int  # P-5, for counts the member did not give
    custom_tools: frozenset[str] = frozenset()  # Responses custom tools (calls go back as custom_tool_call)
    namespaced_tools: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # flat → (namespace, name)
    dropped_tools: tuple[str, ...] = ()  # hosted tools not offered: named in X-Bench-Dropped-Tools
    dropped_items: tuple[str, ...] = ()  # hosted tools' input items left out: named in X-Bench-Dropped-Items
    event_stream: bool = True  # Gemini without `alt=sse` streams one JSON array
    received_ns: int = 0  # monotonic ns when the request was read (Ollama reports real durations)


class RouteEncoder(ABC):
    media_type = "text/event-stream"

    def __init__(self, context: RouteContext) -> None:
        self.context = context

    @abstractmethod
    def start(self) -> bytes:
        """What goes out with the 200 (may be empty)."""

    @abstractmethod
    def chunk(self, chunk: Chunk) -> bytes:
        """One chunk of the live member's stream, as it arrives (may give nothing yet)."""

    @abstractmethod
    def keepalive(self) -> bytes:
        """Written after a stretch of silence so clients and proxies keep waiting."""

    @abstractmethod
    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        """The end of the turn: what only the whole answer can give (tool calls, usage, `bench`)."""

    @abstractmethod
    def error(self, status: int, message: str) -> bytes:
        """The end of a stream that failed after its 200, in the format's error form."""

    @abstractmethod
    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> Any:
        """The whole reply, not streamed."""

    def reply(self, summary: TurnSummary, bench: dict[str, Any]) -> Reply:
        """A non-streamed turn: the body, with `X-Bench-Conversation` and `X-Bench-Model` (RM-8)."""
        headers = route_headers(str(bench.get("conversation", "")), str(bench.get("alias", "")))
        return Reply(body=self.body(summary, bench), headers={**headers, **self.headers()})

    def headers(self) -> dict[str, str]:
        """What the request carried that no member was shown (X-2), on every 200 of the turn."""
        context = self.context
        named = {DROPPED_TOOLS_HEADER: context.dropped_tools, DROPPED_ITEMS_HEADER: context.dropped_items}
        return {header: ", ".join(kinds) for header, kinds in named.items() if kinds}

    def counts(self, summary: TurnSummary) -> tuple[int, int]:
        """(input, output) tokens: the member's own counts, else (each one missing) estimates."""
        usage = summary.usage
        tokens_in = usage.tokens_in if usage and usage.tokens_in else self.context.input_estimate
        tokens_out = usage.tokens_out if usage and usage.tokens_out else summary.output_estimate()
        return tokens_in, tokens_out

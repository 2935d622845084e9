"""The format seam: what one API format (OpenAI chat, completions, Responses, Anthropic, Ollama, Gemini)
must provide so the gateway can serve it. Adding a format is one module implementing `Format`.

A format translates its request body into an `Ask` (raising `Refusal` for anything it cannot carry),
renders errors in its own shape (H-1), renders a finished panel, and encodes a streamed panel through a
`StreamEncoder` (S-1..S-5). Its other routes (model listings, token counts) are pure functions of a
`Lookup`. It never does I/O: the routes and the stream driver do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from services.gateway.ask import Ask

if TYPE_CHECKING:  # the route encoder's own module builds on this one
    from services.gateway.formats.route_encoder import RouteContext, RouteEncoder


@dataclass(frozen=True)
class Lookup:
    """What a format's non-generation route reads: the model rows the caller may see (H-G1), the body of a
    POST ({} for a GET), the path parameters, and the time listings give as `modified_at`."""

    rows: list[dict[str, Any]]
    body: dict[str, Any]
    params: Mapping[str, str]
    modified_at: str


@dataclass(frozen=True)
class ExtraRoute:
    """A route of a format that is not a generation (a model listing, a token count). `answer` returns the
    JSON body, or raises `Refusal` (answered in the format's error shape)."""

    method: str
    path: str
    answer: Callable[[Lookup], Any]


@dataclass(frozen=True)
class Answer:
    """A finished panel as every format sees it: the reply text and the `bench` object (P-13..P-15)."""

    collection: str  # the canonical name, `bench/<c>`
    content: str
    bench: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """A non-streamed reply: the JSON body and any headers the format adds (e.g. Gemini's X-Bench-*)."""

    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class StreamEncoder(ABC):
    """The bytes of one streamed reply. Pieces concatenated equal the reply text (S-4)."""

    media_type = "text/event-stream"

    @abstractmethod
    def start(self) -> bytes:
        """What goes out first, with the 200 (may be empty)."""

    @abstractmethod
    def piece(self, text: str) -> bytes:
        """One piece of the reply text."""

    @abstractmethod
    def keepalive(self) -> bytes:
        """Written after a stretch of silence (S-3) so clients and proxies keep waiting."""

    @abstractmethod
    def finish(self, bench: dict[str, Any]) -> bytes:
        """The end of a successful stream, carrying `bench` where the format has room for it."""

    @abstractmethod
    def error(self, status: int, message: str) -> bytes:
        """The end of a stream that failed after its 200 (S-2), in the format's error form."""


class Format(ABC):
    name: str
    # POST paths this format answers (FastAPI path syntax; path parameters reach `parse` as `params`).
    routes: tuple[str, ...]

    @abstractmethod
    def parse(self, body: dict[str, Any], params: Mapping[str, str]) -> Ask:
        """The body (a JSON object) → an Ask; raises `Refusal` for anything unsupported (X-*)."""

    @abstractmethod
    def error_body(self, status: int, message: str) -> Any:
        """H-1: the error body in this format's shape."""

    @abstractmethod
    def reply(self, ask: Ask, answer: Answer) -> Reply:
        """A finished panel, not streamed."""

    @abstractmethod
    def encoder(self, ask: Ask, collection: str) -> StreamEncoder:
        """A fresh encoder for one streamed reply to `ask` on the canonical `collection`."""

    @abstractmethod
    def route_encoder(self, context: RouteContext) -> RouteEncoder:
        """A fresh encoder for one route-mode turn (RM-7) in this format."""

    def direct(self, body: dict[str, Any], params: Mapping[str, str]) -> Any | None:
        """A request on a generation route that no panel answers (Gemini's `:countTokens`): its JSON body,
        or None for a generation (the default)."""
        return None

    def extra_routes(self) -> list[ExtraRoute]:
        """The format's other routes (e.g. Ollama's /api/tags, Gemini's model listing); none by default."""
        return []

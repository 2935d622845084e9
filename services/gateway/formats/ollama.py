"""Ollama `POST /api/chat` and `POST /api/generate`: H-G7, S-1, S-3, S-5, H-1.

Ollama streams unless told not to, as NDJSON lines: one per piece, an empty `done:false` line as the
keep-alive, and a `done:true` line carrying the real durations (ns since the request was read), estimated
counts and `bench`. `/api/chat` answers in `message`, `/api/generate` in `response`. The request side lives
in `ollama_request`.
"""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from services.gateway.ask import Ask, make_ask
from services.gateway.formats.base import Answer, ExtraRoute, Format, Lookup, Reply, StreamEncoder
from services.gateway.formats.canonical import Message, stream_flag
from services.gateway.formats.common import bench_fields, model_field
from services.gateway.formats.ollama_listing import VERSION, show_body, tags_body
from services.gateway.formats.ollama_request import chat_messages, generate_messages, model_name, route_fields
from services.gateway.formats.route_encoder import RouteContext, RouteEncoder
from services.gateway.panel.flatten import estimate_text
from services.gateway.route_mode.assemble import Chunk, TurnSummary, delta_of, text_of


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": message}


def created_at() -> str:
    """UTC with microseconds and a `Z`, as Ollama writes it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def done_fields(ask: Ask, text: str) -> dict[str, Any]:
    """The closing fields: real durations since the request was read; P-5 estimates for the counts."""
    elapsed = time.monotonic_ns() - ask.received_ns
    return {
        "done": True, "done_reason": "stop", "total_duration": elapsed, "load_duration": 0,
        "prompt_eval_count": ask.estimate, "prompt_eval_duration": 0,
        "eval_count": estimate_text(text), "eval_duration": elapsed,
    }


class OllamaFormat(Format):
    key: str  # where the reply text goes: `message` (chat) or `response` (generate)

    @abstractmethod
    def messages(self, body: dict[str, Any]) -> tuple[list[Message], str]:
        """The canonical messages and why they make an agent's turn."""

    def parse(self, body: dict[str, Any], params: Mapping[str, str]) -> Ask:
        model = model_field(body)
        nominees, reply = bench_fields(body)
        messages, agentic = self.messages(body)
        fields, has_tools = route_fields(body)
        return make_ask(
            self.name, model_name(model), messages, asked_model=model, with_=nominees, reply=reply,
            stream=stream_flag(body, default=True), agentic="tools" if has_tools else agentic,
            route_fields=fields,
        )

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error_body(status, message)

    def text(self, text: str) -> dict[str, Any]:
        if self.key == "message":
            return {"message": {"role": "assistant", "content": text}}
        return {"response": text}

    def reply(self, ask: Ask, answer: Answer) -> Reply:
        return Reply(body={
            "model": ask.asked_model, "created_at": created_at(), **self.text(answer.content),
            **done_fields(ask, answer.content), "bench": answer.bench,
        })

    def encoder(self, ask: Ask, collection: str) -> StreamEncoder:
        return OllamaLines(self, ask)

    def route_encoder(self, context: RouteContext) -> RouteEncoder:
        return OllamaRouteEncoder(context, self.key)

class OllamaChat(OllamaFormat):
    name = "ollama_chat"
    routes = ("/api/chat",)
    key = "message"

    def messages(self, body: dict[str, Any]) -> tuple[list[Message], str]:
        return chat_messages(body.get("messages"))

    def extra_routes(self) -> list[ExtraRoute]:
        """Ollama's model routes (H-G8), served once, with the chat format's error shape."""
        return [
            ExtraRoute("GET", "/api/tags", lambda lookup: tags_body(lookup.rows, lookup.modified_at)),
            ExtraRoute("GET", "/api/version", lambda lookup: VERSION),
            ExtraRoute("POST", "/api/show", show),
        ]


def show(lookup: Lookup) -> dict[str, Any]:
    return show_body(lookup.rows, lookup.body, lookup.modified_at)


class OllamaGenerate(OllamaFormat):
    name = "ollama_generate"
    routes = ("/api/generate",)
    key = "response"

    def messages(self, body: dict[str, Any]) -> tuple[list[Message], str]:
        return generate_messages(body), ""


def line(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode() + b"\n"


class OllamaLines(StreamEncoder):
    """S-5 Ollama: NDJSON, a `done:false` line per piece, a `done:true` line with `bench` at the end."""

    media_type = "application/x-ndjson"

    def __init__(self, fmt: OllamaFormat, ask: Ask) -> None:
        self.fmt = fmt
        self.ask = ask
        self.model = ask.asked_model
        self.sent = ""

    def start(self) -> bytes:
        return b""

    def piece(self, text: str) -> bytes:
        self.sent += text
        return line({"model": self.model, "created_at": created_at(), **self.fmt.text(text), "done": False})

    def keepalive(self) -> bytes:
        return self.piece("")

    def finish(self, bench: dict[str, Any]) -> bytes:
        return line({
            "model": self.model, "created_at": created_at(), **self.fmt.text(""),
            **done_fields(self.ask, self.sent), "bench": bench,
        })

    def error(self, status: int, message: str) -> bytes:
        return line(error_body(status, message))


# ---------------------------------------------------------------- route mode
# Ollama `/api/chat` (and `/api/generate`) in route mode (RM-7).
#
# NDJSON: a line per text piece; at the end one line carrying every tool call as
# `message.tool_calls: [{function: {name, arguments: <object>}}]` (Ollama clients read arguments as an
# object); then the done line with `done_reason` (`length` when the member was cut), real durations, the
# member's counts and `bench`. `/api/generate` has no tools: its text goes in `response`.


def ollama_tool_calls(summary: TurnSummary) -> list[dict[str, Any]]:
    return [{"function": {"name": c.name, "arguments": c.arguments_object()}} for c in summary.tool_calls]


class OllamaRouteEncoder(RouteEncoder):
    media_type = "application/x-ndjson"

    def __init__(self, context: RouteContext, key: str = "message") -> None:
        super().__init__(context)
        self.key = key  # `message` (chat) or `response` (generate)

    def text(self, text: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        if self.key != "message":
            return {"response": text}
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        return {"message": message}

    def head(self) -> dict[str, Any]:
        return {"model": self.context.model, "created_at": created_at()}

    def done(self, summary: TurnSummary) -> dict[str, Any]:
        elapsed = time.monotonic_ns() - self.context.received_ns if self.context.received_ns else 0
        tokens_in, tokens_out = self.counts(summary)
        return {
            "done": True, "done_reason": "length" if summary.cut else "stop", "total_duration": elapsed,
            "load_duration": 0, "prompt_eval_count": tokens_in, "prompt_eval_duration": 0,
            "eval_count": tokens_out, "eval_duration": elapsed,
        }

    def start(self) -> bytes:
        return b""

    def chunk(self, chunk: Chunk) -> bytes:
        text = text_of(delta_of(chunk))
        return line({**self.head(), **self.text(text), "done": False}) if text else b""

    def keepalive(self) -> bytes:
        return line({**self.head(), **self.text(""), "done": False})

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        calls = ollama_tool_calls(summary)
        out = b""
        if calls and self.key == "message":
            out = line({**self.head(), **self.text("", calls), "done": False})
        return out + line({**self.head(), **self.text(""), **self.done(summary), "bench": bench})

    def error(self, status: int, message: str) -> bytes:
        return line(error_body(status, message))

    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> dict[str, Any]:
        calls = ollama_tool_calls(summary)
        return {**self.head(), **self.text(summary.text, calls), **self.done(summary), "bench": bench}

"""Gemini `POST …/models/<model>:generateContent | :streamGenerateContent`: H-G9, S-1, S-3, S-5, H-1.

The model and the method share the path's last segment: the LAST `:` separates them, so
`bench/core:route:generateContent` asks `bench/core:route`. Gemini bodies have no room for `bench`: a plain
reply names the panel and its seats in `X-Bench-Panel` / `X-Bench-Seats`; a stream carries neither. Streams
are SSE with `alt=sse`, otherwise one JSON array written element by element. The request side lives in
`gemini_request`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from services.gateway.ask import Ask, make_ask
from services.gateway.formats.base import Answer, ExtraRoute, Format, Lookup, Reply, StreamEncoder
from services.gateway.formats.common import bench_fields, sse
from services.gateway.formats.gemini_listing import model_body, models_body
from services.gateway.formats.gemini_request import request_messages, route_fields
from services.gateway.formats.route_encoder import RouteContext, RouteEncoder
from services.gateway.formats.token_count import gemini_count
from services.gateway.panel.flatten import estimate_text
from services.gateway.route_mode.assemble import Chunk, TurnSummary, delta_of, text_of
from shared.refusal import Refusal

TARGET = "target"  # the routes' path parameter: everything after `/models/`
MODEL_ID = "model_id"  # the model route's path parameter (GET)
ALT = "alt"  # the query parameter the route passes along in `params` (`sse` → server-sent events)
GENERATE, STREAM, COUNT = "generateContent", "streamGenerateContent", "countTokens"
# The routes' path convertors (registered by the routes): `<model>:<method>`, and a model id (no method).
GEMINI_CALL, GEMINI_MODEL = "gemini_call", "gemini_model"
STATUSES = {
    400: "INVALID_ARGUMENT", 413: "INVALID_ARGUMENT", 415: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": STATUSES.get(status, "INTERNAL")}}


def target(params: Mapping[str, str]) -> tuple[str, str]:
    """The model (URL-decoded) and the method of `<model>:<method>`; 404 for a method not served."""
    model, _, method = unquote(params.get(TARGET, "")).rpartition(":")
    if not model or method not in (GENERATE, STREAM, COUNT):
        raise Refusal(404, f"unknown Gemini method {json.dumps(method)}: POST models/<model>:{GENERATE} or "
                           f":{STREAM} (or :{COUNT})")
    return model, method


def seats_header(bench: dict[str, Any]) -> str:
    """H-G9: `{call, seat, alias, status}` per seat, the merger included."""
    seats = [s for s in bench.get("seats", []) if isinstance(s, dict)]
    merger = bench.get("merger")
    if isinstance(merger, dict) and merger.get("call") not in {s.get("call") for s in seats}:
        seats.append({"seat": "merger", **merger})
    return json.dumps([{k: s.get(k) for k in ("call", "seat", "alias", "status")} for s in seats])


def usage(prompt_tokens: int, text: str) -> dict[str, int]:
    candidates = estimate_text(text)
    return {"promptTokenCount": prompt_tokens, "candidatesTokenCount": candidates,
            "totalTokenCount": prompt_tokens + candidates}


def candidate(text: str, **rest: Any) -> dict[str, Any]:
    return {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0, **rest}


class Gemini(Format):
    name = "gemini"
    routes = (f"/v1beta/models/{{{TARGET}:{GEMINI_CALL}}}", f"/v1/models/{{{TARGET}:{GEMINI_CALL}}}")

    def parse(self, body: dict[str, Any], params: Mapping[str, str]) -> Ask:
        model, method = target(params)
        if method == COUNT:
            raise Refusal(404, f"{COUNT} generates nothing: it is answered by its own handler")
        nominees, reply = bench_fields(body)
        messages, agentic = request_messages(body)
        fields, has_tools = route_fields(body)
        return make_ask(
            self.name, model, messages, with_=nominees, reply=reply, stream=method == STREAM,
            agentic="tools" if has_tools else agentic, route_fields=fields,
            event_stream=params.get(ALT) == "sse",
        )

    def direct(self, body: dict[str, Any], params: Mapping[str, str]) -> Any | None:
        """`:countTokens` shares the generation routes (H-G9): answered here, no collection checked."""
        return gemini_count(body) if target(params)[1] == COUNT else None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error_body(status, message)

    def reply(self, ask: Ask, answer: Answer) -> Reply:
        body = {
            "candidates": [candidate(answer.content, finishReason="STOP")],
            "modelVersion": ask.asked_model,
            "responseId": secrets.token_urlsafe(16),
            "usageMetadata": usage(ask.estimate, answer.content),
        }
        headers = {
            "X-Bench-Panel": str(answer.bench.get("panel", "")), "X-Bench-Seats": seats_header(answer.bench),
        }
        return Reply(body=body, headers=headers)

    def encoder(self, ask: Ask, collection: str) -> StreamEncoder:
        return GeminiChunks(ask.asked_model, ask.estimate, ask.event_stream)

    def extra_routes(self) -> list[ExtraRoute]:
        return [
            ExtraRoute("GET", "/v1beta/models", lambda lookup: models_body(lookup.rows)),
            ExtraRoute("GET", f"/v1beta/models/{{{MODEL_ID}:{GEMINI_MODEL}}}", one_model),
        ]

    def route_encoder(self, context: RouteContext) -> RouteEncoder:
        return GeminiRouteEncoder(context)

def one_model(lookup: Lookup) -> dict[str, Any]:
    return model_body(lookup.rows, lookup.params.get(MODEL_ID, ""))


class GeminiChunks(StreamEncoder):
    """S-5 Gemini: a chunk per piece (an empty one as the keep-alive), the last with `finishReason` and
    usage; an error as the last element. SSE events, or one JSON array's elements (`[`, `,\\r\\n`, `]`)."""

    def __init__(self, model: str, prompt_tokens: int, event_stream: bool) -> None:
        self.model = model
        self.prompt_tokens = prompt_tokens
        self.event_stream = event_stream
        self.media_type = "text/event-stream" if event_stream else "application/json"
        self.response_id = secrets.token_urlsafe(16)
        self.sent = ""
        self.elements = 0

    def element(self, payload: dict[str, Any]) -> bytes:
        if self.event_stream:
            return sse(payload)
        out = (b",\r\n" if self.elements else b"") + json.dumps(payload, ensure_ascii=False).encode()
        self.elements += 1
        return out

    def chunk(self, text: str, last: bool = False) -> bytes:
        payload: dict[str, Any] = {
            "candidates": [candidate(text, finishReason="STOP") if last else candidate(text)],
            "modelVersion": self.model, "responseId": self.response_id,
        }
        if last:
            payload["usageMetadata"] = usage(self.prompt_tokens, self.sent)
        return self.element(payload)

    def end(self) -> bytes:
        return b"" if self.event_stream else b"]"

    def start(self) -> bytes:
        return b"" if self.event_stream else b"["

    def piece(self, text: str) -> bytes:
        self.sent += text
        return self.chunk(text)

    def keepalive(self) -> bytes:
        return self.chunk("")

    def finish(self, bench: dict[str, Any]) -> bytes:
        return self.chunk("", last=True) + self.end()

    def error(self, status: int, message: str) -> bytes:
        return self.element(error_body(status, message)) + self.end()


# ---------------------------------------------------------------- route mode
# Gemini `generateContent` / `streamGenerateContent` in route mode (RM-7).
#
# Text chunks as they come; the last chunk's parts are a `functionCall` {id, name, args} per tool call (the
# id comes back on the client's `functionResponse`, so results match their calls), with `finishReason`
# MAX_TOKENS when the member stopped for length, else STOP, and the member's counts. Gemini bodies have no
# room for `bench`: the headers name the conversation and the model. SSE with `alt=sse`, otherwise one JSON
# array written element by element.


def finish_reason(summary: TurnSummary) -> str:
    return "MAX_TOKENS" if summary.cut else "STOP"


def parts(summary: TurnSummary, text: str) -> list[dict[str, Any]]:
    calls = [{"functionCall": {"id": c.id, "name": c.name, "args": c.arguments_object()}}
             for c in summary.tool_calls]
    return ([{"text": text}] if text or not calls else []) + calls


class GeminiRouteEncoder(RouteEncoder):
    def __init__(self, context: RouteContext) -> None:
        super().__init__(context)
        self.media_type = "text/event-stream" if context.event_stream else "application/json"
        self.response_id = secrets.token_urlsafe(16)
        self.elements = 0

    def payload(self, content_parts: list[dict[str, Any]], **rest: Any) -> dict[str, Any]:
        candidate = {"content": {"role": "model", "parts": content_parts}, "index": 0}
        return {"candidates": [{**candidate, **rest}], "modelVersion": self.context.model,
                "responseId": self.response_id}

    def usage(self, summary: TurnSummary) -> dict[str, int]:
        tokens_in, tokens_out = self.counts(summary)
        usage = {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out,
                 "totalTokenCount": tokens_in + tokens_out}
        if summary.usage and summary.usage.reasoning:
            usage["thoughtsTokenCount"] = summary.usage.reasoning
        return usage

    def element(self, payload: dict[str, Any]) -> bytes:
        if self.context.event_stream:
            return sse(payload)
        out = (b",\r\n" if self.elements else b"") + json.dumps(payload, ensure_ascii=False).encode()
        self.elements += 1
        return out

    def end(self) -> bytes:
        return b"" if self.context.event_stream else b"]"

    def start(self) -> bytes:
        return b"" if self.context.event_stream else b"["

    def chunk(self, chunk: Chunk) -> bytes:
        text = text_of(delta_of(chunk))
        return self.element(self.payload([{"text": text}])) if text else b""

    def keepalive(self) -> bytes:
        return self.element(self.payload([{"text": ""}]))

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        last = self.payload(parts(summary, ""), finishReason=finish_reason(summary))
        return self.element({**last, "usageMetadata": self.usage(summary)}) + self.end()

    def error(self, status: int, message: str) -> bytes:
        return self.element(error_body(status, message)) + self.end()

    def body(self, summary: TurnSummary, bench: dict[str, Any]) -> dict[str, Any]:
        whole = self.payload(parts(summary, summary.text), finishReason=finish_reason(summary))
        return {**whole, "usageMetadata": self.usage(summary)}

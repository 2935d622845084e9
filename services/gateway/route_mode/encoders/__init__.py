"""Route-mode encoders, one module per API format (RM-7); `route_encoder` picks the request's own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.gateway.ask import Ask
from services.gateway.route_mode.conversation import canonical_collection
from services.gateway.route_mode.eligibility import request_estimate
from services.gateway.route_mode.encoders.anthropic import MessageRelay
from services.gateway.route_mode.encoders.base import RouteContext, RouteEncoder
from services.gateway.route_mode.encoders.completions import CompletionRelay
from services.gateway.route_mode.encoders.gemini import GeminiRelay
from services.gateway.route_mode.encoders.ollama import OllamaRelay
from services.gateway.route_mode.encoders.openai_chat import ChatRelay
from services.gateway.route_mode.encoders.responses import ResponseRelay, custom_tool_names
from services.gateway.route_mode.upstream_request import request_fields

__all__ = ["RouteContext", "RouteEncoder", "context_for", "route_encoder"]


def context_for(ask: Ask, collection: str, body: Mapping[str, Any] | None = None) -> RouteContext:
    """What the encoders need of a parsed request. `body` is the request body as sent: a Responses request's
    custom tools are read from it (the Ask carries them translated into functions), and an OpenAI chat
    request's tools are counted in the input estimate from it."""
    custom = custom_tool_names(body or {}) if ask.format == "responses" else frozenset()
    return RouteContext(
        format=ask.format, collection=canonical_collection(collection), model=ask.asked_model or ask.model,
        input_estimate=request_estimate(ask.messages, request_fields(ask, body)), custom_tools=custom,
        event_stream=ask.event_stream, received_ns=ask.received_ns,
    )


def route_encoder(context: RouteContext) -> RouteEncoder:
    """A fresh encoder for one turn in the request's format."""
    if context.format == "anthropic":
        return MessageRelay(context)
    if context.format == "responses":
        return ResponseRelay(context)
    if context.format == "gemini":
        return GeminiRelay(context)
    if context.format == "ollama_chat":
        return OllamaRelay(context, "message")
    if context.format == "ollama_generate":
        return OllamaRelay(context, "response")
    if context.format == "completions":
        return CompletionRelay(context)
    return ChatRelay(context)

"""A refusal made before any route runs still speaks the route's language (H-1): the format's error body
on a gateway route, `{"ok": false, "errors": [...]}` on the admin API and pages. Pure."""

from __future__ import annotations

from typing import Any

from services.gateway.access import RouteKind, is_gemini_path
from services.gateway.formats import FORMATS, OPENAI_CHAT
from services.gateway.formats.base import Format

BY_NAME = {fmt.name: fmt for fmt in FORMATS}
BY_PATH = {
    "/v1/messages": "anthropic", "/v1/messages/count_tokens": "anthropic",
    "/v1/responses": "responses", "/responses": "responses",
    "/v1/completions": "completions", "/completions": "completions",
    "/api/chat": "ollama_chat", "/api/generate": "ollama_generate", "/api/tags": "ollama_chat",
    "/api/show": "ollama_chat", "/api/version": "ollama_chat",
}


def format_of(path: str) -> Format:
    if is_gemini_path(path):
        return BY_NAME.get("gemini", OPENAI_CHAT)
    return BY_NAME.get(BY_PATH.get(path, ""), OPENAI_CHAT)


def error_body(path: str, kind: RouteKind, status: int, message: str) -> Any:
    if kind == "gateway":
        return format_of(path).error_body(status, message)
    return {"ok": False, "errors": [message]}

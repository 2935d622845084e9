"""Model listing per kind (C-3)."""

from __future__ import annotations

import json

from services.caller.listing import models_request, parse_models
from shared.commands import ModelsRequest


def req(api: str, **over: str) -> ModelsRequest:
    return ModelsRequest.model_validate(
        {
            "endpoint": "ep",
            "base": "https://api.example.com/v1",
            "api": api,
            "headers": {"X-Title": "bench"},
            **over,
        }
    )


def test_requests_per_kind() -> None:
    chat = models_request(req("chat"), "sk")
    assert (chat.method, chat.url) == ("GET", "https://api.example.com/v1/models")
    assert chat.headers["Authorization"] == "Bearer sk" and chat.headers["X-Title"] == "bench"
    gemini = models_request(req("gemini"), "AIza", page="tok2")
    assert gemini.url == "https://api.example.com/v1/models?pageSize=1000&pageToken=tok2"
    assert gemini.headers["x-goog-api-key"] == "AIza"
    anthropic = models_request(req("anthropic"), "sk-ant", page="m-b")
    assert anthropic.url == "https://api.example.com/v1/models?limit=1000&after_id=m-b"
    assert (
        anthropic.headers["x-api-key"] == "sk-ant" and anthropic.headers["anthropic-version"] == "2023-06-01"
    )
    custom = models_request(req("gemini", models_url="https://hub.example.com/list?x=1"), None)
    assert (
        custom.url == "https://hub.example.com/list?x=1&pageSize=1000"
        and "x-goog-api-key" not in custom.headers
    )


def test_openai_list_drops_entries_not_visible() -> None:
    raw = json.dumps(
        {
            "object": "list",
            "data": [
                {"id": "m-a", "object": "model", "context_length": 131072},
                {"id": "m-hidden", "object": "model", "visibility": "hidden"},
                {"id": "m-b", "object": "model", "visibility": "list"},
            ],
        }
    ).encode()
    page = parse_models("chat", raw)
    assert [(m.id, m.context_window) for m in page.models] == [("m-a", 131072), ("m-b", None)]
    assert page.next == "" and page.error == ""


def test_gemini_keeps_generate_content_and_strips_models_prefix() -> None:
    raw = json.dumps(
        {
            "models": [
                {
                    "name": "models/gemini-2.5-flash",
                    "displayName": "Gemini 2.5 Flash",
                    "inputTokenLimit": 1048576,
                    "outputTokenLimit": 65536,
                    "supportedGenerationMethods": ["generateContent", "countTokens"],
                },
                {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]},
            ],
            "nextPageToken": "tok2",
        }
    ).encode()
    page = parse_models("gemini", raw)
    assert [(m.id, m.name, m.context_window, m.max_output) for m in page.models] == [
        ("gemini-2.5-flash", "Gemini 2.5 Flash", 1048576, 65536)
    ]
    assert page.next == "tok2"


def test_anthropic_pages_and_errors() -> None:
    raw = json.dumps(
        {
            "data": [{"type": "model", "id": "claude-a", "display_name": "Claude A"}],
            "has_more": True,
            "first_id": "claude-a",
            "last_id": "claude-a",
        }
    ).encode()
    page = parse_models("anthropic", raw)
    assert [(m.id, m.name) for m in page.models] == [("claude-a", "Claude A")] and page.next == "claude-a"
    assert parse_models("chat", b"<html>").error.startswith("Error: client failed: non-JSON reply")
    assert parse_models("chat", b"[1]").error

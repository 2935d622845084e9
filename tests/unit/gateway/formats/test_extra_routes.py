"""The formats' routes that run no panel, as the seam declares them (H-G6, H-G8, H-G9): each a pure answer to
a `Lookup`, and Gemini's `:countTokens`, which shares the generation routes, answered before any parse."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.formats import FORMATS
from services.gateway.formats.base import ExtraRoute, Lookup
from services.gateway.formats.gemini import Gemini
from services.gateway.listing import model_rows
from shared.refusal import Refusal
from tests.unit.factories import collection, config, endpoint, model

WHEN = "2026-01-02T03:04:05.000000Z"
ROWS = model_rows(
    config(endpoint(), model("m1", vision=True, context_window=8_000), collection("core", ["m1"]))
)


def extra(method: str, path: str) -> ExtraRoute:
    return next(r for fmt in FORMATS for r in fmt.extra_routes() if (r.method, r.path) == (method, path))


def lookup(body: dict[str, Any] | None = None, **params: str) -> Lookup:
    return Lookup(rows=ROWS, body=body or {}, params=params, modified_at=WHEN)


def test_every_extra_route_is_declared_once() -> None:
    routes = [(r.method, r.path) for fmt in FORMATS for r in fmt.extra_routes()]
    assert sorted(routes) == sorted(
        [
            ("POST", "/v1/messages/count_tokens"),
            ("GET", "/api/tags"),
            ("GET", "/api/version"),
            ("POST", "/api/show"),
            ("GET", "/v1beta/models"),
            ("GET", "/v1beta/models/{model_id:gemini_model}"),
        ]
    )


def test_anthropic_count_tokens_needs_no_collection() -> None:
    body = {"model": "bench/none", "system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}]}
    assert extra("POST", "/v1/messages/count_tokens").answer(lookup(body)) == {"input_tokens": 3}


def test_ollama_model_routes() -> None:
    assert extra("GET", "/api/version").answer(lookup()) == {"version": "0.12.0"}
    tags = extra("GET", "/api/tags").answer(lookup())["models"]
    assert [t["name"] for t in tags] == ["bench/core", "bench/core:merged", "bench/core:route"]
    assert {t["modified_at"] for t in tags} == {WHEN}
    shown = extra("POST", "/api/show").answer(lookup({"model": "core:latest"}))
    assert shown["capabilities"] == ["completion", "vision"]
    with pytest.raises(Refusal) as caught:
        extra("POST", "/api/show").answer(lookup({"model": "nope"}))
    assert caught.value.status == 404


def test_gemini_model_routes() -> None:
    listed = extra("GET", "/v1beta/models").answer(lookup())["models"]
    assert [m["name"] for m in listed] == [
        "models/bench/core",
        "models/bench/core:merged",
        "models/bench/core:route",
    ]
    route = extra("GET", "/v1beta/models/{model_id:gemini_model}")
    one = route.answer(lookup(model_id="bench%2Fcore%3Amerged"))
    assert (one["name"], one["inputTokenLimit"]) == ("models/bench/core:merged", 8_000)


def test_gemini_count_tokens_is_answered_directly_and_generations_are_not() -> None:
    gemini = Gemini()
    body = {"contents": [{"parts": [{"text": "Hi"}]}]}
    assert gemini.direct(body, {"target": "bench/none:countTokens", "alt": ""}) == {"totalTokens": 1}
    assert gemini.direct(body, {"target": "bench/core:generateContent", "alt": ""}) is None
    with pytest.raises(Refusal) as caught:
        gemini.direct(body, {"target": "bench/core:embedContent", "alt": ""})
    assert caught.value.status == 404 and "generateContent" in caught.value.message
    assert all(fmt.direct(body, {}) is None for fmt in FORMATS if not isinstance(fmt, Gemini))

"""Ollama tags/show/version (H-G8) and Gemini model list/get (H-G9) from the `/v1/models` rows."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from services.gateway.formats.gemini_listing import model_body, models_body
from services.gateway.formats.ollama_listing import VERSION, show_body, tags_body
from services.gateway.listing import model_rows
from shared.refusal import Refusal
from tests.unit.factories import collection, config, endpoint, model

WHEN = "2026-01-02T03:04:05.000000Z"


def rows() -> list[dict[str, Any]]:
    state = config(
        endpoint(),
        model("m1", vision=True, context_window=128_000),
        model("m2", vision=True, context_window=32_000),
        model("m3"),
        collection("eyes", ["m1", "m2"], description="Seeing models"),
        collection("core", ["m1", "m3"], reply="merged"),
    )
    return model_rows(state)


def test_tags_list_every_row_as_an_ollama_model() -> None:
    tags = tags_body(rows(), WHEN)["models"]
    names = [t["name"] for t in tags]
    assert names == [
        "bench/core",
        "bench/core:all",
        "bench/core:route",
        "bench/eyes",
        "bench/eyes:merged",
        "bench/eyes:route",
    ]
    first = tags[0]
    assert first["model"] == "bench/core" and first["modified_at"] == WHEN and first["size"] == 0
    assert first["digest"] == hashlib.sha256(b"bench/core").hexdigest()
    assert first["details"] == {
        "parent_model": "",
        "format": "",
        "family": "benchwarmers",
        "families": ["benchwarmers"],
        "parameter_size": "",
        "quantization_level": "",
    }


def test_version() -> None:
    assert VERSION == {"version": "0.12.0"}


@pytest.mark.parametrize(
    "body",
    [{"model": "eyes"}, {"model": "bench/eyes"}, {"name": "eyes:latest"}, {"model": "bench/eyes:latest"}],
)
def test_show_finds_a_collection_however_it_is_named(body: dict[str, Any]) -> None:
    shown = show_body(rows(), body, WHEN)
    assert shown["modelfile"] == "# Seeing models"
    assert (shown["parameters"], shown["template"], shown["modified_at"]) == ("", "{{ .Prompt }}", WHEN)
    assert shown["model_info"] == {
        "general.architecture": "benchwarmers",
        "general.basename": "bench/eyes",
        "benchwarmers.context_length": 32_000,
    }
    assert shown["capabilities"] == ["completion", "vision"]  # every member sees
    assert shown["details"]["family"] == "benchwarmers"


def test_show_without_a_known_window_or_full_vision() -> None:
    shown = show_body(rows(), {"model": "core:route"}, WHEN)
    assert shown["modelfile"] == "# bench/core:route"
    assert shown["model_info"] == {
        "general.architecture": "benchwarmers",
        "general.basename": "bench/core:route",
        "benchwarmers.context_length": 128_000,
    }
    assert shown["capabilities"] == ["completion"]


def test_show_refuses_unknown_and_missing_models() -> None:
    with pytest.raises(Refusal) as caught:
        show_body(rows(), {"model": "nope"}, WHEN)
    assert caught.value.status == 404 and "nope" in caught.value.message
    with pytest.raises(Refusal) as caught:
        show_body(rows(), {}, WHEN)
    assert caught.value.status == 400


def test_gemini_model_list_and_get() -> None:
    listed = models_body(rows())["models"]
    assert [m["name"] for m in listed][:3] == [
        "models/bench/core",
        "models/bench/core:all",
        "models/bench/core:route",
    ]
    eyes = model_body(rows(), "bench%2Feyes%3Amerged")
    assert eyes == {
        "name": "models/bench/eyes:merged",
        "baseModelId": "bench/eyes:merged",
        "version": "1",
        "displayName": "bench/eyes:merged",
        "description": "Seeing models",
        "inputTokenLimit": 32_000,
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
    }
    assert model_body(rows(), "models/bench/eyes:merged") == eyes
    with pytest.raises(Refusal) as caught:
        model_body(rows(), "bench/nope")
    assert caught.value.status == 404


def test_gemini_model_without_a_known_window_has_no_limit() -> None:
    state = config(endpoint(), model("m3"), collection("plain", ["m3"]))
    assert "inputTokenLimit" not in model_body(model_rows(state), "bench/plain")

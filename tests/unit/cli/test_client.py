"""Which secret goes to which route, and how the server's words become reasons (pure parts of the client)."""

from __future__ import annotations

import pytest

from cli.client import bearer_for, reasons
from cli.settings import normalise_url


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/endpoint", "admin"),
        ("/api/ledger/rebuild", "admin"),
        ("/v1/chat/completions", "key"),
        ("/bench/verdict", "key"),
        ("/health", None),
        ("/apiary", None),
        ("/v1", None),
    ],
)
def test_each_secret_goes_only_to_its_routes(path: str, expected: str | None) -> None:
    assert bearer_for(path, "admin", "key") == expected


def test_no_secret_no_header() -> None:
    assert bearer_for("/api/models", None, "key") is None
    assert bearer_for("/v1/models", "admin", "") is None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"ok": False, "errors": ["name taken", "bad base"]}, ["name taken", "bad base"]),
        ({"error": {"message": "unknown collection"}}, ["unknown collection"]),
        ({"error": "nope"}, ["nope"]),
        ({"detail": [{"msg": "field required"}]}, ["field required"]),
        ({"detail": "Not Found"}, ["Not Found"]),
        ("<html>", []),
        (None, []),
    ],
)
def test_reasons_read_every_refusal_shape(data: object, expected: list[str]) -> None:
    assert reasons(data) == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://127.0.0.1:8122", "http://127.0.0.1:8122"),
        ("http://127.0.0.1:8122/", "http://127.0.0.1:8122"),
        ("http://127.0.0.1:8122/v1", "http://127.0.0.1:8122"),
        (" https://bench.example/v1/ ", "https://bench.example"),
    ],
)
def test_a_pasted_openai_base_url_is_the_server_url(given: str, expected: str) -> None:
    assert normalise_url(given) == expected

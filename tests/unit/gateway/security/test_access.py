"""Which route a request is for and which credential it carries (SEC-3, SEC-4), decided without I/O."""

from __future__ import annotations

import pytest

from services.gateway import access
from services.gateway.access import Credential


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/health", "open"),
        ("/login", "open"),
        ("/v1/models", "gateway"),
        ("/bench/verdict", "gateway"),
        ("/api/chat", "gateway"),
        ("/v1beta/models/x:generateContent", "gateway"),
        ("/api/models", "admin"),
        ("/", "admin"),
        ("/ui/usage", "admin"),
        ("/ui/live", "admin"),
        ("/ui/do/verdict", "admin"),
        ("/ui/static/dash.css", "open"),  # the login page's own stylesheet and scripts
        ("/openapi.json", "admin"),
    ],
)
def test_the_route_decides_who_may_call(path: str, kind: str) -> None:
    assert access.route_kind(path) == kind


def test_gemini_routes_are_the_only_ones_that_read_a_query_key() -> None:
    assert access.is_gemini_path("/v1beta/models")
    assert access.is_gemini_path("/v1/models/bench%2Fcore:generateContent")
    assert not access.is_gemini_path("/v1/models")
    assert not access.is_gemini_path("/v1/chat/completions")


def test_the_first_credential_present_is_the_one_judged() -> None:
    both = {"authorization": "Bearer first", "x-api-key": "second"}
    assert access.first_credential(both, "third", True) == Credential("authorization", "first")
    assert access.first_credential({"x-goog-api-key": "g"}, "q", True) == Credential("x-goog-api-key", "g")
    assert access.first_credential({}, "q", True) == Credential("key", "q")
    assert access.first_credential({}, "q", False) is None
    assert access.first_credential(
        {"authorization": "Basic abc", "x-api-key": "k"}, None, False
    ) == Credential("authorization", "")


def test_refusals_say_why_without_echoing_the_credential() -> None:
    assert "malformed" in access.refusal_for(Credential("authorization", ""))
    unknown = access.refusal_for(Credential("x-api-key", "sk-wrong"))
    assert "unknown or revoked" in unknown and "start bwk_" in unknown and "sk-wrong" not in unknown
    assert "start bwk_" not in access.refusal_for(Credential("x-api-key", "bwk_x"))

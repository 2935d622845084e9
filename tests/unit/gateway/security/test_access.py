"""Who a request runs as (SEC-3, SEC-4), decided without I/O."""

from __future__ import annotations

import pytest

from services.gateway import access
from services.gateway.access import Caller, Credential
from shared.config_rules.keys import key_hash

TOKEN = "a-token-of-twenty-chars"


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


@pytest.mark.parametrize(
    ("token", "flag", "required"),
    [
        (None, "", False),
        (None, "0", False),
        (None, "Off", False),
        (None, "1", True),
        (None, "ture", True),
        (TOKEN, "", True),
        (TOKEN, "no", True),
    ],
)
def test_keys_are_required_with_a_token_or_a_flag_and_misspellings_fail_closed(
    token: str | None, flag: str, required: bool
) -> None:
    assert access.keys_required(token, flag) is required


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


def test_keys_are_bwk_and_43_url_safe_characters() -> None:
    keys = {access.new_key() for _ in range(50)}
    assert len(keys) == 50 and all(access.KEY_RE.match(k) for k in keys)
    assert key_hash("bwk_a") != key_hash("bwk_b") and len(key_hash("x")) == 64


def test_a_session_cookie_holds_an_expiry_and_a_mac_never_the_token() -> None:
    cookie = access.session_cookie(TOKEN, now=1000.0, secure=True)
    assert TOKEN not in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" in cookie
    value = access.cookie_from(f"other=1; {cookie.split(';')[0]}")
    assert value is not None
    assert access.valid_session(value, TOKEN, now=2000.0)
    assert not access.valid_session(value, TOKEN, now=1000.0 + access.SESSION_S + 1)  # expired
    assert not access.valid_session(value, "another-token-entirely", now=2000.0)  # the token changed
    forged = f"{int(9e9)}.{value.split('.')[1]}"
    assert not access.valid_session(forged, TOKEN, now=2000.0)


def test_admin_routes_take_the_bearer_alone_when_sent() -> None:
    cookie = access.session_value(TOKEN, 10_000)
    assert access.admin_caller(None, None, None, 0) == access.LOCAL
    assert access.admin_caller(f"Bearer {TOKEN}", None, TOKEN, 0) == Caller("admin")
    assert access.admin_caller(None, cookie, TOKEN, 0) == Caller("ui")
    assert access.admin_caller("Bearer wrong", cookie, TOKEN, 0) is None
    assert access.admin_caller(None, None, TOKEN, 0) is None

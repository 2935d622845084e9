"""Who a request runs as (SEC-3, SEC-4): the admin token, login cookies and gateway keys, without I/O."""

from __future__ import annotations

import pytest

from shared import access
from shared.access import Caller
from shared.config_rules.keys import key_hash

TOKEN = "a-token-of-twenty-chars"


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

"""Who is calling, the part every HTTP surface shares (SEC-3, SEC-4): the caller a request runs as, the
admin token's bearer and login-cookie checks, whether gateway keys are required, and how a key is drawn.
Pure: `caller_of` only reads what the guard left on the request's scope.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

KEY_PREFIX = "bwk_"
KEY_RE = re.compile(r"^bwk_[A-Za-z0-9_-]{43}$")
SESSION_COOKIE = "bw_session"
SESSION_S = 604_800
OFF_WORDS = ("", "0", "false", "no", "off")


@dataclass(frozen=True)
class Caller:
    """Who a request runs as: `local`, an admin (`admin` by bearer, `ui` by cookie), or a gateway key's name
    with its scope (None: every collection), its rpm cap and the id of the event that made it."""

    name: str = "local"
    collections: tuple[str, ...] | None = None
    rpm: int | None = None
    key_id: str = ""


LOCAL = Caller()


def caller_of(conn: HTTPConnection) -> Caller:
    """The identity the guard gave this request (`local` when none was needed)."""
    found = conn.scope.get("state", {}).get("caller")
    return found if isinstance(found, Caller) else LOCAL


def keys_required(admin_token: str | None, require_keys: str) -> bool:
    """SEC-3: required when a token is set, or REQUIRE_KEYS is anything but off (misspellings fail closed)."""
    return bool(admin_token) or require_keys.strip().lower() not in OFF_WORDS


def same_secret(given: str, secret: str) -> bool:
    """Constant time, over digests, so neither the length nor a prefix leaks."""
    given_digest, secret_digest = (hashlib.sha256(s.encode()).digest() for s in (given, secret))
    return hmac.compare_digest(given_digest, secret_digest)


# ---------------------------------------------------------------- admin routes (SEC-3)


def session_value(token: str, expiry: int) -> str:
    """`<expiry>.<HMAC-SHA256("session|<expiry>", token) hex>`: never the token; a new token voids it."""
    mac = hmac.new(token.encode(), f"session|{expiry}".encode(), hashlib.sha256).hexdigest()
    return f"{expiry}.{mac}"


def valid_session(value: str, token: str, now: float) -> bool:
    expiry, _, _mac = value.partition(".")
    if not expiry.isdigit() or int(expiry) < now:
        return False
    return hmac.compare_digest(value, session_value(token, int(expiry)))


def session_cookie(token: str, now: float, secure: bool) -> str:
    value = session_value(token, int(now) + SESSION_S)
    tail = "; Secure" if secure else ""
    return f"{SESSION_COOKIE}={value}; Path=/; Max-Age={SESSION_S}; HttpOnly; SameSite=Strict{tail}"


def cookie_from(header: str | None) -> str | None:
    for part in (header or "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == SESSION_COOKIE:
            return value
    return None


def admin_caller(
    authorization: str | None, cookie: str | None, token: str | None, now: float
) -> Caller | None:
    """None: refused. A bearer, when sent, is judged alone (a wrong one is not rescued by a cookie)."""
    if not token:
        return LOCAL
    if authorization is not None:
        scheme, _, given = authorization.partition(" ")
        return Caller("admin") if scheme.lower() == "bearer" and same_secret(given.strip(), token) else None
    if cookie is not None and valid_session(cookie, token, now):
        return Caller("ui")
    return None


# ---------------------------------------------------------------- gateway keys (SEC-4)


def new_key() -> str:
    """`bwk_` + 43 url-safe characters (256 random bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)

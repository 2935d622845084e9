"""Who is calling, decided by the route (SEC-3, SEC-4). Pure: functions of a path, headers and the secrets.

Three kinds of route: open (`/health`, `/login`, the dashboard's static files), gateway (the model APIs,
`/bench/*`), admin (everything else: `/api/*`, pages). The admin token or the login cookie opens admin
routes only; a gateway key opens gateway routes only; without a token (and without
BENCHWARMERS_REQUIRE_KEYS) every caller is `local`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from services.gateway.gateway_paths import is_gateway_path

RouteKind = Literal["open", "gateway", "admin"]
KEY_PREFIX = "bwk_"
KEY_RE = re.compile(r"^bwk_[A-Za-z0-9_-]{43}$")
SESSION_COOKIE = "bw_session"
SESSION_S = 604_800
OFF_WORDS = ("", "0", "false", "no", "off")
CREDENTIAL_HEADERS = ("x-api-key", "x-goog-api-key")


@dataclass(frozen=True)
class Caller:
    """Who a request runs as: `local`, an admin (`admin` by bearer, `ui` by cookie), or a gateway key's name
    with its scope (None: every collection), its rpm cap and the id of the event that made it."""

    name: str = "local"
    collections: tuple[str, ...] | None = None
    rpm: int | None = None
    key_id: str = ""


LOCAL = Caller()


def route_kind(path: str) -> RouteKind:
    if path in ("/health", "/login") or path.startswith(("/connect/callback", "/ui/static/")):
        return "open"
    return "gateway" if is_gateway_path(path) else "admin"


def is_gemini_path(path: str) -> bool:
    """Gemini's routes: `/v1beta/…` and `/v1/models/<model>:<method>` (the only ones that read `?key=`)."""
    models = "/v1/models/"
    return path.startswith("/v1beta/") or (path.startswith(models) and ":" in path[len(models):])


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


@dataclass(frozen=True)
class Credential:
    source: str  # authorization, x-api-key, x-goog-api-key or key (Gemini's query parameter)
    value: str  # "" when malformed


def first_credential(headers: Mapping[str, str], query_key: str | None, gemini: bool) -> Credential | None:
    """The FIRST credential present is the one judged; a bad one is not rescued by a later one."""
    auth = headers.get("authorization")
    if auth is not None:
        scheme, _, token = auth.strip().partition(" ")
        good = scheme.lower() == "bearer" and token.strip() and " " not in token.strip()
        return Credential("authorization", token.strip() if good else "")
    for name in CREDENTIAL_HEADERS:
        value = headers.get(name)
        if value is not None:
            return Credential(name, value.strip())
    if gemini and query_key is not None:
        return Credential("key", query_key.strip())
    return None


def missing_key() -> str:
    return ("a gateway key is required: send it as 'Authorization: Bearer <key>' (or in x-api-key or "
            "x-goog-api-key)")


def refusal_for(credential: Credential) -> str:
    """Why a present credential opens nothing: malformed, or unknown/revoked (never echoing it)."""
    if not credential.value:
        if credential.source == "authorization":
            return "the Authorization header is malformed: send 'Authorization: Bearer <key>'"
        return f"the {credential.source} credential is empty: send 'Authorization: Bearer <key>'"
    why = "that gateway key is unknown or revoked"
    if not credential.value.startswith(KEY_PREFIX):
        why += f" (gateway keys start {KEY_PREFIX})"
    return why

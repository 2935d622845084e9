"""Who is calling, decided by the route (SEC-3, SEC-4). Pure: functions of a path, headers and the secrets.

Three kinds of route: open (`/health`, `/login`, the dashboard's static files), gateway (the model APIs,
`/bench/*`), admin (everything else: `/api/*`, pages). The admin token or the login cookie opens admin
routes only (`shared/access.py`); a gateway key opens gateway routes only; without a token (and without
BENCHWARMERS_REQUIRE_KEYS) every caller is `local`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from services.gateway.gateway_paths import is_gateway_path
from shared.access import KEY_PREFIX

RouteKind = Literal["open", "gateway", "admin"]
CREDENTIAL_HEADERS = ("x-api-key", "x-goog-api-key")


def route_kind(path: str) -> RouteKind:
    if path in ("/health", "/login") or path.startswith(("/connect/callback", "/ui/static/")):
        return "open"
    return "gateway" if is_gateway_path(path) else "admin"


def is_gemini_path(path: str) -> bool:
    """Gemini's routes: `/v1beta/…` and `/v1/models/<model>:<method>` (the only ones that read `?key=`)."""
    models = "/v1/models/"
    return path.startswith("/v1beta/") or (path.startswith(models) and ":" in path[len(models):])


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

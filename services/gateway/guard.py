"""The request guard (SEC-2..SEC-5), in front of every route as a pure ASGI middleware: the Host allow-list,
Origin and `Sec-Fetch-Site`, CORS, JSON-only POSTs within the size limits, then who the caller is (SEC-3,
SEC-4). The order is SPEC's: guard → login/key → route, so a stranger cannot probe which routes exist.

A refusal here already has the route's error shape (H-1): the format's on gateway routes, `{"ok": false,
"errors": [...]}` elsewhere. The caller's name is bound for the access line (SEC-6: never a key or a query).
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs

import structlog
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway import access
from services.gateway.access import RouteKind
from services.gateway.allow import Allowed, cors_headers, preflight_headers
from services.gateway.errors_by_path import error_body
from services.gateway.http import ADMIN_BODY_LIMIT, GATEWAY_BODY_LIMIT, IMAGE_ADVICE
from services.gateway.keys.admit import RETRY_AFTER
from services.gateway.methods import MethodTable, allow_header
from shared.access import KEY_RE, LOCAL, Caller, admin_caller, cookie_from, keys_required
from shared.config_rules.keys import key_hash
from shared.config_writer import config_caught_up
from shared.key_book import key_book
from shared.settings import GatewaySettings
from shared.version import version_line

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="benchwarmers"'}
SIGN_IN = ("sign in first: send 'Authorization: Bearer <admin token>' (BENCHWARMERS_ADMIN_TOKEN), or log in "
           "at /login")


class Reject(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


class Guard:
    def __init__(self, app: ASGIApp, settings: GatewaySettings) -> None:
        self.app = app
        self.allowed = Allowed.from_settings(settings)
        self.token = settings.admin_token.get_secret_value() if settings.admin_token else None
        self.required = keys_required(self.token, settings.require_keys)
        self.secure_cookie = settings.public_url.lower().startswith("https://")
        self.version = version_line()  # H-0: `<version> <date>`

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        kind = access.route_kind(path)
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        cors = kind == "gateway" and self.allowed.origin_ok(origin)
        send = self.decorated(scope, send, origin if cors else None)
        try:
            if path != "/health":
                if not self.allowed.host_ok(headers.get("host")):
                    raise Reject(403, "this server does not answer for that Host (allowed: 127.0.0.1, "
                                      "localhost or [::1] with the port, BENCH_ALLOWED_HOSTS, or the public "
                                      "URL's host)")
                if scope["method"] == "OPTIONS" and kind == "gateway":
                    await respond(send, 204, None, self.preflight(origin, headers, allowed(scope)))
                    return
                receive = await self.check(scope, receive, headers, kind, origin)
        except Reject as reject:
            await respond(send, reject.status, error_body(path, kind, reject.status, reject.message),
                          reject.headers)
            return
        await self.app(scope, receive, send)

    async def check(self, scope: Scope, receive: Receive, headers: Headers, kind: RouteKind,
                    origin: str | None) -> Receive:
        if scope["method"] == "POST":
            receive = await self.post_rules(scope, receive, headers, kind, origin)
        caller = await self.identify(scope, headers, kind)
        scope.setdefault("state", {})["caller"] = caller
        structlog.contextvars.bind_contextvars(who=caller.name)
        return receive

    def preflight(self, origin: str | None, headers: Headers, methods: list[str]) -> dict[str, str]:
        if origin is None:
            return allow_header(methods)
        if not self.allowed.origin_ok(origin):
            raise Reject(403, f"origin {origin} is not allowed (BENCH_ALLOWED_ORIGINS)")
        return preflight_headers(origin, headers.get("access-control-request-headers"))

    async def post_rules(self, scope: Scope, receive: Receive, headers: Headers, kind: RouteKind,
                         origin: str | None) -> Receive:
        origin_ok = self.allowed.origin_ok(origin)
        cross_site = headers.get("sec-fetch-site", "").lower() == "cross-site"
        if cross_site and not (kind == "gateway" and origin_ok):
            raise Reject(403, "cross-site requests are refused here")
        if origin is not None and not origin_ok:
            raise Reject(403, f"origin {origin} is not allowed (BENCH_ALLOWED_ORIGINS)")
        if "POST" not in allowed(scope):
            return receive  # no body is read: the route table answers 405 (or 404)
        if not headers.get("content-type", "").lower().startswith("application/json"):
            raise Reject(415, "send the body as JSON with Content-Type: application/json")
        limit, advice = (GATEWAY_BODY_LIMIT, IMAGE_ADVICE) if kind == "gateway" else (ADMIN_BODY_LIMIT, "")
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                raise Reject(400, "Content-Length must be a non-negative number")
            if int(declared) > limit:
                raise Reject(413, f"body is {int(declared):,} bytes; the limit is {limit:,}.{advice}")
            return receive
        return await buffered(receive, limit, advice)

    async def identify(self, scope: Scope, headers: Headers, kind: RouteKind) -> Caller:
        if kind == "open":
            return LOCAL
        if kind == "admin":
            cookie = cookie_from(headers.get("cookie"))
            caller = admin_caller(headers.get("authorization"), cookie, self.token, time.time())
            if caller is not None:
                return caller
            if is_page(scope):
                raise Reject(303, "sign in first", {"Location": "/login"})
            raise Reject(401, SIGN_IN)
        if not self.required:
            return LOCAL
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        query_key = query["key"][0] if "key" in query else None
        credential = access.first_credential(headers, query_key, access.is_gemini_path(scope["path"]))
        if credential is None:
            raise Reject(401, access.missing_key(), CHALLENGE)
        caller = await self.key_caller(scope, credential)
        if caller is None:
            raise Reject(401, access.refusal_for(credential), CHALLENGE)
        ctx = scope["app"].state.ctx
        await (await key_book(scope["app"].state, ctx.js)).touch(caller.name)
        return caller

    async def key_caller(self, scope: Scope, credential: access.Credential) -> Caller | None:
        """A key made on another replica a moment ago is found once this one holds every config event."""
        if not credential.value:
            return None
        ctx = scope["app"].state.ctx
        digest = key_hash(credential.value)
        name = ctx.config.key_hashes.get(digest)
        if name is None and KEY_RE.match(credential.value):
            await config_caught_up(ctx.js, ctx.projection)
            name = ctx.config.key_hashes.get(digest)
        key = ctx.config.gateway_keys.get(name) if name else None
        if key is None:
            return None
        scope_ = tuple(key.collections) if key.collections is not None else None
        return Caller(name=key.name, collections=scope_, rpm=key.rpm, key_id=key.id)

    def decorated(self, scope: Scope, send: Send, cors_origin: str | None) -> Send:
        """Every reply carries the version (A-100); gateway replies to an allowed origin carry CORS; a 429
        from a key's cap carries Retry-After."""

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = {"x-benchwarmers-version": self.version}
                if cors_origin:
                    extra.update({k.lower(): v for k, v in cors_headers(cors_origin).items()})
                wait = scope.get("state", {}).get(RETRY_AFTER)
                if message["status"] == 429 and wait:
                    extra["retry-after"] = str(wait)
                present = {bytes(k).lower() for k, _ in message.get("headers", [])}
                added = [(k.encode(), v.encode()) for k, v in extra.items() if k.encode() not in present]
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        return sending


def allowed(scope: Scope) -> list[str]:
    """The methods of the path asked (OPTIONS included: this answers it), as the app's route table says; an
    unknown path is held to every rule (its 404 lists the routes)."""
    table: MethodTable = scope["app"].state.methods
    return table.allowed(scope["path"], preflight=True) or ["GET", "POST", "OPTIONS"]


def is_page(scope: Scope) -> bool:
    path: str = scope["path"]
    return scope["method"] in ("GET", "HEAD") and not path.startswith("/api/") and path != "/openapi.json"


async def buffered(receive: Receive, limit: int, advice: str) -> Receive:
    """A body sent without Content-Length is read here, up to the limit, then handed on whole."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:
            raise Reject(413, f"body is over {limit:,} bytes; the limit is {limit:,}.{advice}")
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def respond(send: Send, status: int, body: Any, headers: dict[str, str]) -> None:
    raw = b"" if body is None else json.dumps(body).encode()
    pairs = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    if body is not None:
        pairs += [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    else:
        pairs.append((b"content-length", b"0"))
    await send({"type": "http.response.start", "status": status, "headers": pairs})
    await send({"type": "http.response.body", "body": raw})

"""What the gateway answers for a request no route takes (H-G15, H-0, H-D2): a path that exists but not
for this method is 405 with `Allow`; a method no HTTP server is expected to know is 501; an unknown path is
404. Each in the error shape of the path's format (H-1)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from services.gateway.access import route_kind
from services.gateway.deliver import error_response
from services.gateway.errors_by_path import error_body
from services.gateway.formats import OPENAI_CHAT
from services.gateway.gateway_paths import is_gateway_path
from services.gateway.methods import KNOWN, MethodTable, allow_header
from services.gateway.routes.convertors import ANYTHING

PARAMETER = re.compile(r"\{(\w+):\w+\}")
CATCH_ALL = f"/{{rest:{ANYTHING}}}"


def shown_path(path: str) -> str:
    """A route as a client reads it: `/v1beta/models/{target:gemini_call}` → `/v1beta/models/{target}`."""
    return PARAMETER.sub(r"{\1}", path)


def refused(path: str, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = error_body(path, route_kind(path), status, message)
    return JSONResponse(body, status_code=status, headers=headers)


@dataclass(frozen=True)
class Fallback:
    """The catch-all route's ASGI app: a plain app, not a function, so the route takes every method."""

    table: MethodTable
    get_routes: tuple[str, ...]
    post_routes: tuple[str, ...]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = unrouted(Request(scope, receive), self.table, self.get_routes, self.post_routes)
        await response(scope, receive, send)


def unrouted(request: Request, table: MethodTable, get_routes: Iterable[str], post_routes: Iterable[str]
             ) -> Response:
    method, path = request.method, request.url.path
    if method not in KNOWN:
        return refused(path, 501, f"{method} is not a method this server knows")
    allowed = table.allowed(path, preflight=is_gateway_path(path))
    if allowed:
        return refused(path, 405, f"{path} does not take {method}; it takes {', '.join(allowed)}",
                       allow_header(allowed))
    if path.startswith("/api/") and not is_gateway_path(path):
        return JSONResponse({"ok": False, "errors": ["unknown endpoint"]}, status_code=404)
    routes = sorted(post_routes if method == "POST" else get_routes)
    verb = "POST" if method == "POST" else "GET"
    listing = "\n".join(f"- {verb} {route}" for route in routes)
    return error_response(OPENAI_CHAT, 404, f"no route {verb} {path}. The {verb} routes are:\n{listing}")

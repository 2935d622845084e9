"""What the gateway answers for a route it does not have (H-G15, H-0, H-D2)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from services.gateway.deliver import error_response
from services.gateway.formats import OPENAI_CHAT
from services.gateway.gateway_paths import is_gateway_path

PARAMETER = re.compile(r"\{(\w+):\w+\}")


def shown_path(path: str) -> str:
    """A route as a client reads it: `/v1beta/models/{target:path}` → `/v1beta/models/{target}`."""
    return PARAMETER.sub(r"{\1}", path)


def not_found(request: Request, get_routes: Iterable[str], post_routes: Iterable[str]) -> Response:
    """Unknown admin path → `{"ok": false, "errors": ["unknown endpoint"]}`; otherwise the OpenAI error
    listing the routes of the method asked (GET or POST); any other method → 501."""
    method = request.method
    if method not in ("GET", "HEAD", "POST"):
        return error_response(OPENAI_CHAT, 501, f"{method} is not supported; use GET or POST")
    path = request.url.path
    if path.startswith("/api/") and not is_gateway_path(path):
        return JSONResponse({"ok": False, "errors": ["unknown endpoint"]}, status_code=404)
    routes = sorted(post_routes if method == "POST" else get_routes)
    verb = "POST" if method == "POST" else "GET"
    listing = "\n".join(f"- {verb} {route}" for route in routes)
    return error_response(OPENAI_CHAT, 404, f"no route {verb} {path}. The {verb} routes are:\n{listing}")

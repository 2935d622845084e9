"""Rendering: the Jinja2 templates and static files shipped in this package (no CDN, nothing fetched), the
sidebar (H-D4's Observe, Gateway and Control groups) and the headers every page carries."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

if TYPE_CHECKING:
    from jinja2 import Environment

NAV: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Observe", (("/", "At a glance"), ("/ui/usage", "Usage and quotas"), ("/ui/logs", "Logs"),
                 ("/ui/probes", "Probes"), ("/ui/suite", "Suite results"))),
    ("Gateway", (("/ui/collections", "Collections"), ("/ui/endpoints", "Endpoints"),
                 ("/ui/models", "Models"), ("/ui/mcp", "MCP sessions"), ("/ui/onboarding", "Onboarding"),
                 ("/ui/discover", "Discover"))),
    ("Control", (("/ui/keys", "Gateway keys"), ("/ui/settings", "Settings"), ("/ui/info", "Info"))),
)
PAGES = tuple(href for _, pages in NAV for href, _ in pages)
STATIC = {"htmx.min.js": "text/javascript", "dash.js": "text/javascript", "dash.css": "text/css",
          "htmx.LICENSE": "text/plain"}
# Scripts from this server only (htmx runs with eval off); no page may frame these (their buttons act).
HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; "
                               "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def when(value: Any) -> str:
    """A time as the pages show it: `YYYY-MM-DD HH:MM:SS` (what the ledger says, UTC)."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value or "")[:19].replace("T", " ")


@cache
def templates() -> Environment:
    """Jinja2 (about 9 MB) is loaded on the first page, not at the gateway's start: most never show one."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("services.console.dashboard", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["when"] = when
    return env


def here(request: Request) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


def page(request: Request, template: str, title: str, *, status: int = 200, live: bool = True,
         **values: Any) -> HTMLResponse:
    html = templates().get_template(template).render(
        title=title, nav=NAV if live else (), path=request.url.path, here=here(request), live=live,
        seq=getattr(request.state, "seq", ""),
        notes=values.pop("notes", []), **values)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def fragment(template: str, status: int = 200, headers: dict[str, str] | None = None, **values: Any
             ) -> HTMLResponse:
    return HTMLResponse(templates().get_template(template).render(**values), status_code=status,
                        headers={**HEADERS, **(headers or {})})


def static_files() -> dict[str, bytes]:
    folder = resources.files("services.console.dashboard") / "static"
    return {name: (folder / name).read_bytes() for name in STATIC}


FILES = static_files()


def static(name: str) -> Response:
    """Only the files this package ships; the rest is 404."""
    if name not in FILES:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(FILES[name], media_type=STATIC[name],
                    headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"})

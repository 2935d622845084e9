"""Logging in to the admin pages (H-D1, SEC-3): `POST /login {"token"}` sets a session cookie that holds an
HMAC of an expiry, never the token; `GET /login` is the form (or a redirect home when no token is set)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from services.console.admin.schemas import REFUSALS, LoginBody, Ok
from services.console.context import context
from services.console.dashboard.pages import page
from services.console.routes.admin_base import AdminRoute
from shared.access import same_secret, session_cookie

router = APIRouter(route_class=AdminRoute, tags=["login"])


def token_of(request: Request) -> str | None:
    settings = context(request).settings
    return settings.admin_token.get_secret_value() if settings.admin_token else None


@router.get("/login", response_class=HTMLResponse,
            responses={303: {"description": "no admin token is set: there is nothing to sign in to"}})
async def login_page(request: Request) -> Response:
    """The sign-in form."""
    if not token_of(request):
        return RedirectResponse("/", status_code=303)
    return page(request, "login.html", "Sign in", live=False)


@router.post("/login", response_model=Ok, responses=REFUSALS)
async def login(body: LoginBody, request: Request) -> Any:
    """Trade the admin token for a session cookie (HttpOnly, SameSite=Strict, seven days)."""
    token = token_of(request)
    if not token or not same_secret(body.token, token):
        return JSONResponse({"ok": False, "errors": ["that is not the admin token"]}, status_code=401)
    secure = context(request).settings.public_url.lower().startswith("https://")
    return JSONResponse({"ok": True}, headers={"Set-Cookie": session_cookie(token, time.time(), secure),
                                               "Cache-Control": "no-store"})

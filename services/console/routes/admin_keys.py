"""Gateway keys on the admin API (SEC-4; H-D2 /api/gateway-keys, H-D3 /api/gateway-key[/remove]): a key is
drawn here, shown once in the reply, and kept only as its SHA-256 in a config event."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from services.console.admin import more_views
from services.console.admin.schemas import (
    REFUSALS,
    KeyCreateBody,
    KeyCreatedReply,
    KeyName,
    KeyRevokedReply,
    KeysReply,
)
from services.console.context import context
from services.console.routes.admin_base import AdminRoute, sent, write
from shared.access import keys_required, new_key
from shared.config_rules.keys import create_key, revoke_key
from shared.events import GatewayKeyCreated
from shared.key_book import key_book

router = APIRouter(route_class=AdminRoute, tags=["gateway keys"])


@router.get("/api/gateway-keys", response_model=KeysReply, responses=REFUSALS)
async def list_keys(request: Request) -> dict[str, Any]:
    """Every key's name, hint, scope, cap and last use; never a key or its hash."""
    ctx = context(request)
    book = await key_book(request.app.state, ctx.js)
    used = {name: await book.last_used(name) for name in ctx.config.gateway_keys}
    token = ctx.settings.admin_token.get_secret_value() if ctx.settings.admin_token else None
    return {"ok": True, "required": keys_required(token, ctx.settings.require_keys),
            "keys": more_views.key_rows(ctx.config, used)}


@router.post("/api/gateway-key", response_model=KeyCreatedReply, responses=REFUSALS)
async def create(body: KeyCreateBody, request: Request) -> dict[str, Any]:
    """Make a key, optionally scoped to collections and capped at rpm requests a minute."""
    key = new_key()
    event = await write(request, create_key(sent(body), key))
    assert isinstance(event, GatewayKeyCreated)
    return {"ok": True, "name": event.name, "key": key, "hint": event.hint, "collections": event.collections,
            "rpm": event.rpm}


@router.post("/api/gateway-key/remove", response_model=KeyRevokedReply, responses=REFUSALS)
async def revoke(body: KeyName, request: Request) -> dict[str, Any]:
    """Revoke a key: every replica refuses it as soon as it folds the event."""
    await write(request, revoke_key(sent(body)))
    ctx = context(request)
    await (await key_book(request.app.state, ctx.js)).forget(body.name)
    return {"ok": True, "revoked": body.name}

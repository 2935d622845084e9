"""Alerts (C-16) and the free-tier guard's allow list (U-5) on the admin API: `GET/POST /api/alerts`,
`DELETE /api/alerts/{key}`, `GET/POST /api/allow-paid`. Each write is one config event every caller folds,
so a `went paid` alert holds the model on every replica as soon as it is stored."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Path
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.requests import Request

from services.console.admin import more_views
from services.console.admin.schemas import (
    ALERT_KEY,
    REFUSALS,
    AlertBody,
    AlertClearedReply,
    AlertReply,
    AlertsReply,
    AllowPaidBody,
    AllowPaidReply,
)
from services.console.context import context
from services.console.routes.admin_base import AdminRoute, sent, write
from shared.config_rules.alerts import clear_alert, raise_alert, save_allow_paid
from shared.events import AlertCleared, AlertRaised

router = APIRouter(route_class=AdminRoute, tags=["alerts"])


class AnyKey(PathConvertor):
    """A key as sent, control characters included (`path` stops at a newline, which would leave the
    request to the framework's bare 404 instead of our refusal)."""

    regex = r"[\s\S]+"


register_url_convertor("alert_key", AnyKey())


@router.get("/api/alerts", response_model=AlertsReply, responses=REFUSALS)
async def list_alerts(request: Request) -> dict[str, Any]:
    """Every active alert, the most recently seen first."""
    return {"ok": True, "alerts": more_views.alerts(context(request).config)}


@router.post("/api/alerts", response_model=AlertReply, responses=REFUSALS)
async def raise_one(body: AlertBody, request: Request) -> dict[str, Any]:
    """Raise an alert, or raise it again (its first sighting is kept). A `went paid` alert
    (`model:paid:<served>`) stops the callers calling that served id (U-5)."""
    event = await write(request, raise_alert(sent(body)))
    assert isinstance(event, AlertRaised)
    return {"ok": True, "alert": asdict(context(request).config.alerts[event.key])}


@router.delete("/api/alerts/{key:alert_key}", response_model=AlertClearedReply, responses=REFUSALS)
async def clear_one(request: Request, key: str = Path(json_schema_extra={"pattern": ALERT_KEY})
                    ) -> dict[str, Any]:
    """Clear the alert under `key` (404 when none is up)."""
    event = await write(request, clear_alert(key))
    assert isinstance(event, AlertCleared)
    return {"ok": True, "cleared": event.key}


@router.get("/api/allow-paid", response_model=AllowPaidReply, responses=REFUSALS)
async def allow_paid(request: Request) -> dict[str, Any]:
    """The aliases and served ids called even while a `went paid` alert stands for them."""
    return {"ok": True, "allow_paid": list(context(request).config.allow_paid)}


@router.post("/api/allow-paid", response_model=AllowPaidReply, responses=REFUSALS)
async def save_allowed(body: AllowPaidBody, request: Request) -> dict[str, Any]:
    """Replace that list ([] allows none). A caller run with BENCH_ALLOW_PAID=1 allows every model."""
    await write(request, save_allow_paid(sent(body)))
    return {"ok": True, "allow_paid": list(context(request).config.allow_paid)}

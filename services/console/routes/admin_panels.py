"""Recent panels with what is owed, and one seat with its question and answer, on the admin API (P-17; the
dashboard's Collections page and its verdict dialog read these). From the ledger, over the bus."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Query
from starlette.requests import Request

from services.console.admin.schemas import CALL_ID, REFUSALS, PanelsReply, SeatReply
from services.console.dashboard import reads, views
from services.console.routes.admin_base import AdminRoute
from shared.refusal import Refusal

router = APIRouter(route_class=AdminRoute, tags=["panels"])


@router.get("/api/panels", response_model=PanelsReply, responses=REFUSALS)
async def recent_panels(request: Request, limit: int = Query(default=30, ge=1, le=200)) -> dict[str, Any]:
    """The latest panels, newest first: each seat's status, and the calls still owed a verdict."""
    rows, pending = await reads.recent_panels(request, limit)
    listed = views.panels(rows, pending)
    owed = [seat.call for _, seat in views.owed_seats(listed)]
    return {"ok": True, "panels": [asdict(p) for p in listed], "owed": owed}


@router.get("/api/seat", response_model=SeatReply, responses=REFUSALS)
async def seat(request: Request, call: str = Query(json_schema_extra={"pattern": CALL_ID})) -> dict[str, Any]:
    """One seat: its answer (or error), its panel's prompt and its latest verdict."""
    if not reads.is_call_id(call):
        raise Refusal(400, '"call" must be a seat\'s call id, e.g. "p20260101-120000-ab12.member1"')
    found = await reads.seat(request, call)
    if found is None:
        raise Refusal(404, f"the ledger has no seat {call}")
    return {"ok": True, "seat": found}

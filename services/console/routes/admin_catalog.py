"""The catalog on the admin API (CAT-1..CAT-4): each feed's age and last error (`GET /api/catalog`), a
refresh now, run by a prober (`POST /api/catalog/refresh`), and Discover (`GET /api/discover`), built here
from the feeds the prober cached in `bench_catalog` and this gateway's configuration fold."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from services.console.admin.schemas import (
    REFUSALS,
    CatalogRefreshBody,
    CatalogRefreshReplyBody,
    CatalogStatusReply,
    DiscoverReply,
)
from services.console.context import context
from services.console.routes.admin_base import AdminRoute
from shared import bus_calls, subjects
from shared.catalog.discover import discover, shown
from shared.catalog_store import CatalogStore, status
from shared.commands import CatalogRefreshReply, CatalogRefreshRequest
from shared.ids import utcnow

router = APIRouter(route_class=AdminRoute, tags=["catalog"])
# Three feeds fetched one after another (each capped at BENCH_CATALOG_TIMEOUT_S), then each endpoint listed.
REFRESH_TIMEOUT_S = 300.0


def store(request: Request) -> CatalogStore:
    found = getattr(request.app.state, "catalog", None)
    if found is None:
        found = CatalogStore(context(request).js)
        request.app.state.catalog = found
    return found


@router.get("/api/catalog", response_model=CatalogStatusReply, responses=REFUSALS)
async def catalog_status(request: Request) -> dict[str, Any]:
    """Each catalog feed: where its entries came from (the feed, or the shipped snapshot), how old they
    are, when a fetch was last tried and its error."""
    caches, refreshed = await store(request).caches(), context(request).config.catalog_refreshed
    return {"ok": True, "feeds": status(caches, utcnow()), "refreshed": refreshed}


@router.post("/api/catalog/refresh", response_model=CatalogRefreshReplyBody, responses=REFUSALS)
async def refresh(body: CatalogRefreshBody, request: Request) -> dict[str, Any]:
    """Refresh the catalog now: fetch the feeds, fill every registered model's facts, raise or clear
    `went paid`. A feed that fails keeps its previous entries and says why."""
    ask = CatalogRefreshRequest(force=body.force is not False)
    reply = await bus_calls.ask(context(request).nc, subjects.RPC_PROBER_CATALOG, ask, CatalogRefreshReply,
                                REFRESH_TIMEOUT_S)
    return {**reply.model_dump(mode="json"), "ok": True}


@router.get("/api/discover", response_model=DiscoverReply, responses=REFUSALS)
async def discover_list(request: Request, free: bool = False, new: bool = False) -> dict[str, Any]:
    """Models worth adding (CAT-4): free rows and paid rows on providers this bench reaches, free and new
    first, each with its reach (on bench, connected, easy to add, other); `free` and `new` narrow it."""
    catalog, seen = await store(request).catalog(), await store(request).seen()
    rows = discover(catalog, context(request).config, seen, utcnow().date())
    return {"ok": True, "rows": shown(rows, free=free, new=new), "baseline": seen.built if seen else None}

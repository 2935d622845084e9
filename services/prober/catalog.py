"""The catalog refresh (CAT-1..CAT-4): fetch the feeds that are due (OpenRouter at every refresh,
models.dev and FreeLLMAPI when older than 20 h, all of them when forced), keep each one's cache in
`bench_catalog`, merge them with each endpoint's own listing into every registered chat model's facts,
publish what changed (`catalog_applied`), raise or clear `went paid`, and date Discover's new rows.

Run by the scheduler's `catalog` job (claimed in `bench_jobs` like every job) and on request
(`bench.rpc.prober.catalog`). One refresh at a time per prober; a feed that fails keeps its entries, so the
facts it gave stay as they were, and its error is kept with its age.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

import httpx
import structlog
from nats.aio.client import Client as NATS

from services.prober import catalog_fetch
from services.prober.catalog_fetch import FeedFailed, FeedLimits
from services.prober.catalog_rules import BY, Listings, catalog_facts, paid_alerts
from services.prober.probes import NOT_PROBED_ROLES
from services.prober.schedule import Due
from shared import rpc, subjects
from shared.catalog.cache import FeedCache, encode
from shared.catalog.discover import seen_after
from shared.catalog.feeds import FEEDS, OPENROUTER
from shared.catalog.merge import Catalog
from shared.catalog_store import CatalogStore, status
from shared.commands import (
    CatalogRefreshReply,
    CatalogRefreshRequest,
    ListedModel,
    ModelsReply,
    ModelsRequest,
)
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.events import AlertCleared, AlertRaised, CatalogApplied, ConfigEvent
from shared.ids import utcnow

LIST_TIMEOUT_S = 40.0
HEADROOM = 4096  # a bucket value rides in a message with headers: keep under the server's max payload
log = structlog.get_logger("prober.catalog")


class CatalogRefresh:
    def __init__(self, nc: NATS, config: ConfigState, writer: ConfigWriter, limits: FeedLimits,
                 clock: Callable[[], datetime] = utcnow, listings: bool = True,
                 max_value: int | None = None) -> None:
        self.nc, self.config, self.writer, self.limits = nc, config, writer, limits
        self.max_value = max_value or max(nc.max_payload - HEADROOM, HEADROOM)
        self.store = CatalogStore(nc.jetstream())
        self.clock = clock
        self.ask_listings = listings
        self.lock = asyncio.Lock()

    async def job(self, due: Due) -> tuple[str, str]:
        """The scheduler's `catalog` job: `failed` when every feed it tried failed (the facts stand)."""
        reply = await self.refresh(force=False)
        tried = [f for f in reply.feeds if f.tried is not None and f.tried >= due.at]
        failed = [f for f in tried if f.error]
        outcome = "failed" if tried and len(failed) == len(tried) else "done"
        return outcome, summary(reply)

    async def handle(self, request: CatalogRefreshRequest) -> CatalogRefreshReply:
        return await self.refresh(force=request.force)

    async def serve(self, bus: rpc.Bus) -> rpc.Subscription:
        return await rpc.serve(bus, subjects.RPC_PROBER_CATALOG, subjects.PROBER_QUEUE, CatalogRefreshRequest,
                               self.handle)

    async def refresh(self, force: bool) -> CatalogRefreshReply:
        async with self.lock:
            now = self.clock()
            caches = await self.store.caches()
            async with catalog_fetch.client(self.limits.timeout_s) as http:
                for feed in FEEDS:
                    if force or feed == OPENROUTER or caches[feed].stale(now):
                        caches[feed] = await self.fetched(http, caches[feed], now)
                        await self.store.put(caches[feed])
            catalog = Catalog({feed: cache.entries for feed, cache in caches.items()})
            changed = catalog_facts(self.config, catalog, await self.listings())
            alerts = paid_alerts(self.config, changed)
            if changed:
                await self.write(CatalogApplied(id="", by=BY, refreshed=now, models=changed))
            for event in alerts:
                await self.write(event)
            fetched = {feed: Catalog({feed: c.entries}) for feed, c in caches.items() if c.source == "feed"}
            if fetched:
                await self.store.put_seen(seen_after(await self.store.seen(), fetched, now.date()))
            return CatalogRefreshReply(
                feeds=status(caches, now), changed=sorted(changed),
                raised=[e.key for e in alerts if isinstance(e, AlertRaised)],
                cleared=[e.key for e in alerts if isinstance(e, AlertCleared)],
            )

    async def fetched(self, http: httpx.AsyncClient, cache: FeedCache, now: datetime) -> FeedCache:
        try:
            entries = await catalog_fetch.fetch_feed(http, cache.feed, self.limits)
        except FeedFailed as failed:
            log.warning("catalog_feed_failed", feed=cache.feed, why=str(failed))
            return cache.model_copy(update={"tried": now, "error": str(failed)})
        fresh = FeedCache(feed=cache.feed, fetched=now, tried=now, entries=entries)
        size = len(encode(fresh))
        if size > self.max_value:
            why = f"too large to keep: {size:,} bytes compressed, the bus takes {self.max_value:,}"
            log.warning("catalog_feed_failed", feed=cache.feed, why=why)
            return cache.model_copy(update={"tried": now, "error": why})
        return fresh

    async def listings(self) -> Listings:
        """CAT-1 (4): each endpoint's own listing, through a caller (the only holder of keys); an endpoint
        that does not answer simply adds nothing."""
        if not self.ask_listings:
            return {}
        wanted = {m.endpoint for m in self.config.models.values() if m.role not in NOT_PROBED_ROLES}
        found: dict[str, dict[str, ListedModel]] = {}
        for name in sorted(wanted):
            endpoint = self.config.endpoints.get(name)
            if endpoint is None:
                continue
            ask = ModelsRequest(endpoint=name, base=endpoint.base, api=endpoint.api, headers=endpoint.headers)
            try:
                reply = await rpc.call(self.nc, subjects.RPC_CALLER_MODELS, ask, ModelsReply,
                                       timeout=LIST_TIMEOUT_S)
            except rpc.RpcFailure as failure:
                log.info("catalog_listing_skipped", endpoint=name, why=failure.message[:200])
                continue
            found[name] = {m.id: m for m in reply.models}
        return found

    async def write(self, event: ConfigEvent) -> None:
        def rule(state: ConfigState, event_id: str) -> ConfigEvent:
            return event.model_copy(update={"id": event_id})

        await self.writer.write(rule)


def summary(reply: CatalogRefreshReply) -> str:
    """`openrouter ok (3), models.dev failed: too large …; facts changed: a, b; went paid: …`."""
    feeds = ", ".join(f"{f.feed} " + (f"failed: {f.error}" if f.error else f"ok ({f.models})")
                      for f in reply.feeds)
    parts = [feeds, f"facts changed: {', '.join(reply.changed) or 'none'}"]
    if reply.raised:
        parts.append(f"went paid: {', '.join(reply.raised)}")
    if reply.cleared:
        parts.append(f"free again: {', '.join(reply.cleared)}")
    return "; ".join(parts)

"""The `bench_catalog` bucket (CAT-2, CAT-4): each feed's cache and Discover's first-seen dates. The prober's
refresh writes it; the gateway reads it for `bench catalog status` and Discover. A feed never fetched is
the shipped snapshot's."""

from __future__ import annotations

from datetime import datetime

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from shared import subjects
from shared.catalog.cache import (
    SEEN_KEY,
    FeedCache,
    Seen,
    decode_cache,
    decode_seen,
    encode,
    feed_key,
    snapshot,
)
from shared.catalog.feeds import FEEDS
from shared.catalog.merge import Catalog
from shared.commands import FeedStatus


class CatalogStore:
    def __init__(self, js: JetStreamContext) -> None:
        self.js = js
        self._kv: KeyValue | None = None

    async def kv(self) -> KeyValue:
        if self._kv is None:
            self._kv = await self.js.key_value(subjects.CATALOG_BUCKET)
        return self._kv

    async def caches(self) -> dict[str, FeedCache]:
        """Every feed's cache; the snapshot's for a feed the bucket does not hold yet."""
        kv, found = await self.kv(), snapshot()
        for feed in FEEDS:
            try:
                entry = await kv.get(feed_key(feed))
            except KeyNotFoundError:
                continue
            if entry.value:
                found[feed] = decode_cache(entry.value)
        return found

    async def catalog(self) -> Catalog:
        """The merged feeds as the last refresh left them: with `shared.catalog.merge.facts_for`, a new
        model's facts before it is registered (onboarding's seam)."""
        return Catalog({feed: cache.entries for feed, cache in (await self.caches()).items()})

    async def put(self, cache: FeedCache) -> None:
        await (await self.kv()).put(feed_key(cache.feed), encode(cache))

    async def seen(self) -> Seen | None:
        try:
            entry = await (await self.kv()).get(SEEN_KEY)
        except KeyNotFoundError:
            return None
        return decode_seen(entry.value) if entry.value else None

    async def put_seen(self, seen: Seen) -> None:
        await (await self.kv()).put(SEEN_KEY, encode(seen))


def status(caches: dict[str, FeedCache], now: datetime) -> list[FeedStatus]:
    """Each feed's source, age and last error, as `bench catalog status` shows them."""
    out = []
    for feed in FEEDS:
        cache = caches[feed]
        age = cache.age(now)
        out.append(FeedStatus(feed=feed, source=cache.source, fetched=cache.fetched, tried=cache.tried,
                              age_s=round(age.total_seconds(), 1) if age is not None else None,
                              error=cache.error, models=len(cache.entries)))
    return out

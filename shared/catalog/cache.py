"""What the catalog keeps between refreshes (CAT-2), as stored in the `bench_catalog` bucket: each feed's
entries with when they were fetched, when a fetch was last tried and its error; Discover's first-seen
dates (CAT-4). A feed never fetched falls back on the dated snapshot shipped in the package, so a first
run offline still has facts. Pure: encoding and decoding only."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, date, datetime, timedelta
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from shared.catalog.feeds import FEEDS, FeedEntry

SNAPSHOT = "snapshot.json"
MAX_AGE = timedelta(hours=20)  # CAT-2: models.dev and FreeLLMAPI are refetched when older than this
SEEN_KEY = "discover.seen"


def feed_key(feed: str) -> str:
    return f"feed.{feed}"


class FeedCache(BaseModel):
    """One feed as last fetched. A failed fetch keeps the entries and `fetched`, and says why in `error`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    feed: str
    source: str = "feed"  # `feed`, or `snapshot <date>` until the first successful fetch
    fetched: datetime | None = None
    tried: datetime | None = None
    error: str = ""
    entries: list[FeedEntry] = Field(default_factory=list)

    def age(self, now: datetime) -> timedelta | None:
        return now - self.fetched if self.fetched is not None else None

    def stale(self, now: datetime, max_age: timedelta = MAX_AGE) -> bool:
        age = self.age(now)
        return self.source != "feed" or age is None or age >= max_age


class Seen(BaseModel):
    """CAT-4: when each Discover row (`<provider>/<normalised model>`) was first seen. The rows a feed gave at
    its first good fetch are its baseline (`""`), never new; `feeds` are the feeds whose baseline is taken."""

    model_config = ConfigDict(extra="forbid")
    built: date
    feeds: list[str] = Field(default_factory=list)
    first: dict[str, str] = Field(default_factory=dict)


def encode(value: BaseModel) -> bytes:
    """Compressed JSON: models.dev's entries are far larger as text than a bucket value should be."""
    return zlib.compress(value.model_dump_json().encode(), 6)


def decode_cache(data: bytes) -> FeedCache:
    return FeedCache.model_validate_json(zlib.decompress(data))


def decode_seen(data: bytes) -> Seen:
    return Seen.model_validate_json(zlib.decompress(data))


def snapshot() -> dict[str, FeedCache]:
    """The dated snapshot shipped with the package, one cache per feed (source `snapshot <date>`)."""
    raw = json.loads(resources.files("shared.catalog").joinpath(SNAPSHOT).read_text())
    taken = date.fromisoformat(raw["taken"])
    fetched = datetime(taken.year, taken.month, taken.day, tzinfo=UTC)
    return {
        feed: FeedCache(feed=feed, source=f"snapshot {taken}", fetched=fetched,
                        entries=[FeedEntry.model_validate(e) for e in raw["feeds"].get(feed, [])])
        for feed in FEEDS
    }

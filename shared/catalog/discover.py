"""CAT-4's Discover list: models.dev (text output, not deprecated) and FreeLLMAPI merged into one row per
(provider, normalised model), each with how far it is from this bench (its reach) and whether it is new.
Pure: the feeds, the configuration fold and the first-seen dates come in as values.

Free: an id ending `:free`, a models.dev price of 0, or listed by FreeLLMAPI. Providers whose free models
work only in their own app lose their free rows. Reach: `on bench` (that exact id registered on an endpoint
of the provider), `connected` (an endpoint of the provider exists), `easy to add` (an OpenAI-compatible base
is known), `other`. `new`: first seen within 7 days; the first build is a baseline, never new.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.catalog.cache import Seen
from shared.catalog.feeds import FREELLMAPI, MODELS_DEV, FeedEntry
from shared.catalog.merge import Catalog
from shared.catalog.names import normalise
from shared.config_state import ConfigState
from shared.model_facts import Cost

OWN_APP_ONLY = ("opencode", "opencode-go")  # built in (CAT-4): their free models work only in their app
NEW_DAYS = 7
Reach = Literal["connected", "easy to add", "on bench", "other"]
REACH_ORDER: tuple[Reach, ...] = ("connected", "easy to add", "on bench", "other")


class DiscoverRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    provider: str
    model: str
    name: str = ""
    free: bool
    new: bool
    first_seen: date | None = None
    reach: Reach
    endpoints: list[str] = Field(default_factory=list)  # direct routes: this bench's endpoints to it
    also_on: list[str] = Field(default_factory=list)  # aliases serving the same model via another provider
    context_window: int | None = None
    tools: bool | None = None
    vision: bool | None = None
    cost: Cost | None = None
    feeds: list[str] = Field(default_factory=list)


def row_key(provider: str, model_id: str) -> str:
    return f"{provider}/{normalise(model_id)}"


def candidates(catalog: Catalog) -> dict[str, list[tuple[str, FeedEntry]]]:
    """Row key → the (feed, entry) pairs that make the row, models.dev's first."""
    rows: dict[str, list[tuple[str, FeedEntry]]] = {}
    for entry in catalog.feeds.get(MODELS_DEV, []):
        if entry.text_output and not entry.deprecated:
            rows.setdefault(row_key(entry.provider, entry.id), []).append((MODELS_DEV, entry))
    for entry in catalog.feeds.get(FREELLMAPI, []):
        rows.setdefault(row_key(entry.provider, entry.id), []).append((FREELLMAPI, entry))
    return rows


def seen_after(seen: Seen | None, fetched: Mapping[str, Catalog], today: date) -> Seen:
    """CAT-4, after a refresh: `fetched` holds the feeds fetched from the feed itself (never the shipped
    snapshot). A feed's first good fetch is its baseline (`""`); a row first met later is dated today."""
    seen = seen or Seen(built=today)
    first, feeds = dict(seen.first), list(seen.feeds)
    for feed, catalog in fetched.items():
        when = today.isoformat() if feed in feeds else ""
        for key in candidates(catalog):
            first.setdefault(key, when)
        if feed not in feeds:
            feeds.append(feed)
    return Seen(built=seen.built, feeds=feeds, first=first)


def first_seen(seen: Seen | None, key: str) -> date | None:
    when = seen.first.get(key, "") if seen is not None else ""
    return date.fromisoformat(when) if when else None


def discover(catalog: Catalog, config: ConfigState, seen: Seen | None, today: date,
             own_app_only: Iterable[str] = OWN_APP_ONLY) -> list[DiscoverRow]:
    """Every row worth showing, in CAT-4's order: free first, new first, then reach, provider, model."""
    own_app = set(own_app_only)
    routes: dict[str, list[str]] = {}
    for name, endpoint in config.endpoints.items():
        provider = catalog.provider_for(endpoint)
        if provider is not None:
            routes.setdefault(provider, []).append(name)
    rows = []
    for key, pairs in candidates(catalog).items():
        entries = [entry for _, entry in pairs]
        main = entries[0]
        free = any(e.free for e in entries)
        if free and main.provider in own_app:
            continue
        endpoints = routes.get(main.provider, [])
        ids = {e.id for e in entries}
        on_bench = any(m.endpoint in endpoints and m.served in ids for m in config.models.values())
        name = normalise(main.id)
        also_on = sorted(a for a, m in config.models.items()
                         if m.endpoint not in endpoints and normalise(m.served) == name)
        reach: Reach = ("on bench" if on_bench else "connected" if endpoints
                        else "easy to add" if any(e.base for e in entries) else "other")
        since = first_seen(seen, key)
        rows.append(DiscoverRow(
            provider=main.provider, model=main.id, name=main.name, free=free, first_seen=since,
            new=since is not None and today - since <= timedelta(days=NEW_DAYS), reach=reach,
            endpoints=endpoints, also_on=also_on,
            context_window=next((e.context_window for e in entries if e.context_window), None),
            tools=main.tools, vision=main.vision, cost=main.cost,
            feeds=sorted({feed for feed, _ in pairs}),
        ))
    rows.sort(key=lambda r: (not r.free, not r.new, REACH_ORDER.index(r.reach), r.provider, r.model))
    return rows


def shown(rows: list[DiscoverRow], free: bool = False, new: bool = False) -> list[DiscoverRow]:
    """What the list shows: free rows and paid rows on a provider this bench reaches; `free` keeps only
    free rows, `new` only new ones."""
    reachable = ("connected", "on bench")
    return [r for r in rows if (r.free or (not free and r.reach in reachable)) and (r.new or not new)]

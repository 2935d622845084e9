"""CAT-1..CAT-3 on a real bus: the refresh fetches recorded feed documents from a local HTTP server with
its real httpx code, caches each feed with its age in `bench_catalog`, fills the registered models' facts
(seen by every fold), raises and clears `went paid` (A-98), and a feed that is down, slow, too large or
malformed leaves the facts as they were and says why. The prober's own login, so its grants are tested."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from services.prober.catalog import CatalogRefresh
from services.prober.catalog_fetch import FeedLimits
from shared import bus, subjects
from shared.alerts import paid_hold, paid_key
from shared.catalog.feeds import FREELLMAPI, MODELS_DEV, OPENROUTER
from shared.catalog.merge import facts_for
from shared.catalog_store import CatalogStore
from shared.commands import CatalogRefreshReply
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.events import EndpointSaved, ModelRegistered
from tests.fakes.feeds import FeedServer, Reply
from tests.fixtures.catalog import document, raw

FREE = "meta-llama/llama-3.3-70b-instruct:free"
PATHS = {OPENROUTER: "/api/v1/models", MODELS_DEV: "/api.json", FREELLMAPI: "/v1/latest"}
CAP = 64 * 1024


@pytest.fixture
def feeds() -> Iterator[FeedServer]:
    server = FeedServer().start()
    for feed, path in PATHS.items():
        server.replies[path] = Reply(raw(feed))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def bench(nc: bus.NATS, prober_nc: bus.NATS, feeds: FeedServer) -> AsyncIterator[
        tuple[CatalogRefresh, ConfigState]]:
    js = nc.jetstream()
    for event in (
        EndpointSaved(id="cfg:or", name="openrouter", base="https://openrouter.ai/api/v1"),
        EndpointSaved(id="cfg:groq", name="groq", base="https://api.groq.com/openai/v1"),
        EndpointSaved(id="cfg:openai", name="openai", base="https://api.openai.com/v1"),
        ModelRegistered(id="cfg:free", alias="llama-free", served=FREE, endpoint="openrouter"),
        ModelRegistered(id="cfg:groq-l", alias="versatile", served="llama-3.3-70b-versatile",
                        endpoint="groq"),
        ModelRegistered(id="cfg:mini", alias="mini", served="gpt-4o-mini", endpoint="openai", tools=False),
    ):
        await bus.publish_event(js, event)
    config = ConfigState()
    projection = bus.Projection(prober_nc.jetstream(), subjects.CONFIG, config.apply, "test-catalog")
    await projection.start()
    limits = FeedLimits({feed: feeds.url(path) for feed, path in PATHS.items()}, CAP, timeout_s=1.0)
    writer = ConfigWriter(prober_nc.jetstream(), projection, config)
    refresh = CatalogRefresh(prober_nc, config, writer, limits, listings=False)
    try:
        yield refresh, config
    finally:
        await projection.stop()


def errors(reply: CatalogRefreshReply) -> dict[str, str]:
    return {f.feed: f.error for f in reply.feeds}


async def test_a_refresh_fills_every_registered_models_facts_from_the_feeds(
    bench: tuple[CatalogRefresh, ConfigState], nc: bus.NATS, feeds: FeedServer,
) -> None:
    refresh, config = bench
    reply = await refresh.refresh(force=True)
    assert errors(reply) == {OPENROUTER: "", MODELS_DEV: "", FREELLMAPI: ""}
    assert len(feeds.headers) == 3 and not any({"authorization", "cookie", "x-api-key"} & set(h)
                                               for h in feeds.headers)  # public feeds: no credential
    assert reply.changed == ["llama-free", "mini", "versatile"]
    free = config.facts_of("llama-free")
    assert free is not None and free.cost is not None and free.cost.free
    assert (free.context_window, free.sources["context_window"]) == (131_072, "models.dev")
    assert config.models["llama-free"].tools is True  # route mode takes it, no flag typed
    assert config.models["mini"].tools is False  # the registration beats the catalog
    assert config.models["mini"].vision is True
    caches = await CatalogStore(nc.jetstream()).caches()
    assert {feed: (c.source, len(c.entries)) for feed, c in caches.items()} == {
        OPENROUTER: ("feed", 4), MODELS_DEV: ("feed", 10), FREELLMAPI: ("feed", 6)}
    again = await refresh.refresh(force=True)
    assert again.changed == []  # nothing new: no event
    # Onboarding's seam: the same facts for a model not registered yet, from what the refresh cached.
    cached = await CatalogStore(nc.jetstream()).catalog()
    assert facts_for(FREE, config.endpoints["openrouter"], cached) == free


async def test_a_feed_down_slow_too_large_or_malformed_keeps_the_facts_and_says_why(
    bench: tuple[CatalogRefresh, ConfigState], feeds: FeedServer, nc: bus.NATS,
) -> None:
    refresh, config = bench
    await refresh.refresh(force=True)
    before = {alias: config.facts_of(alias) for alias in config.models}
    fetched = {f: c.fetched for f, c in (await CatalogStore(nc.jetstream()).caches()).items()}
    feeds.replies[PATHS[OPENROUTER]] = Reply(b'{"error": "overloaded"}', status=503)
    feeds.replies[PATHS[MODELS_DEV]] = Reply(raw(MODELS_DEV), delay_s=3.0)
    feeds.replies[PATHS[FREELLMAPI]] = Reply(b"[" + b" " * CAP + b"]", declare_length=False)
    reply = await refresh.refresh(force=True)
    assert errors(reply) == {OPENROUTER: "answered HTTP 503", MODELS_DEV: "no whole answer within 1 s",
                             FREELLMAPI: f"too large: more than {CAP:,} bytes"}
    assert reply.changed == [] and {a: config.facts_of(a) for a in config.models} == before
    caches = await CatalogStore(nc.jetstream()).caches()
    assert {f: c.fetched for f, c in caches.items()} == fetched  # the age runs on from the last good fetch
    assert all(c.entries for c in caches.values())
    feeds.replies[PATHS[OPENROUTER]] = Reply(b'{"models": "soon"}')
    feeds.replies[PATHS[MODELS_DEV]] = Reply(b"<html>maintenance</html>")
    feeds.replies[PATHS[FREELLMAPI]] = Reply(json.dumps({"providers": []}).encode())
    reply = await refresh.refresh(force=True)
    assert errors(reply) == {OPENROUTER: 'malformed: expected {"data": [models]}',
                             MODELS_DEV: "malformed: not JSON", FREELLMAPI: "listed no model"}
    assert {a: config.facts_of(a) for a in config.models} == before


async def test_a98_a_free_model_whose_refreshed_price_is_non_zero_raises_went_paid(
    bench: tuple[CatalogRefresh, ConfigState], feeds: FeedServer,
) -> None:
    refresh, config = bench
    await refresh.refresh(force=True)
    priced = document(MODELS_DEV)
    priced["openrouter"]["models"][FREE]["cost"] = {"input": 0.1, "output": 0.32}
    feeds.replies[PATHS[MODELS_DEV]] = Reply(json.dumps(priced).encode())
    reply = await refresh.refresh(force=True)
    assert reply.raised == [paid_key(FREE)]
    alert = config.alerts[paid_key(FREE)]
    assert (alert.kind, alert.by, alert.alias) == ("went paid", "catalog", "llama-free")
    assert "listed with a price now: $0.1 in, $0.32 out per million tokens (models.dev)" in alert.message
    assert paid_hold(config.alerts, config.allow_paid, "llama-free", FREE) is alert  # the guard holds it
    still = await refresh.refresh(force=True)
    assert still.raised == [] and paid_key(FREE) in config.alerts  # still priced: it stays up
    feeds.replies[PATHS[MODELS_DEV]] = Reply(raw(MODELS_DEV))
    free_again = await refresh.refresh(force=True)
    assert free_again.cleared == [paid_key(FREE)] and paid_key(FREE) not in config.alerts


async def test_a_first_run_offline_has_the_snapshots_facts(
    bench: tuple[CatalogRefresh, ConfigState], feeds: FeedServer, nc: bus.NATS,
) -> None:
    refresh, config = bench
    feeds.replies.clear()  # every feed answers 404
    reply = await refresh.refresh(force=False)
    assert {f.feed: f.source.split()[0] for f in reply.feeds} == dict.fromkeys(PATHS, "snapshot")
    assert all(f.error == "answered HTTP 404" for f in reply.feeds)
    assert await CatalogStore(nc.jetstream()).seen() is None  # Discover's baseline waits for a real feed
    mini = config.facts_of("mini")
    assert mini is not None and mini.context_window == 128_000
    assert mini.sources["context_window"] == "models.dev"


async def test_a_young_cache_is_not_fetched_again_but_openrouter_always_is(
    bench: tuple[CatalogRefresh, ConfigState], feeds: FeedServer,
) -> None:
    refresh, _ = bench
    await refresh.refresh(force=True)
    feeds.hits.clear()
    await refresh.refresh(force=False)
    assert feeds.hits == [PATHS[OPENROUTER]]
    refresh.clock = lambda: datetime.now(UTC) + timedelta(hours=21)
    feeds.hits.clear()
    await refresh.refresh(force=False)
    assert sorted(feeds.hits) == sorted(PATHS.values())


async def test_a_feed_too_large_for_the_bus_keeps_what_it_had(
    bench: tuple[CatalogRefresh, ConfigState],
) -> None:
    refresh, config = bench
    await refresh.refresh(force=True)
    before = config.facts_of("mini")
    refresh.max_value = 700  # the recorded models.dev takes 773 bytes compressed, the others less
    reply = await refresh.refresh(force=True)
    found = {f.feed: f for f in reply.feeds}
    assert found[MODELS_DEV].error.startswith("too large to keep: ") and found[MODELS_DEV].models == 10
    assert config.facts_of("mini") == before

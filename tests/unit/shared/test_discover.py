"""CAT-4 (A-99): the Discover list from the recorded feeds: one row per provider and model, free and new
first, each with its reach; an own-app-only provider never shows free rows; a row is new for 7 days from
when it was first seen, and nothing is new on the first build."""

from __future__ import annotations

from datetime import date, timedelta

from shared.catalog.discover import DiscoverRow, discover, seen_after, shown
from shared.catalog.feeds import FREELLMAPI, MODELS_DEV, OPENROUTER, PARSERS
from shared.catalog.merge import Catalog
from shared.config_state import ConfigState
from tests.fixtures.catalog import document
from tests.unit.factories import config, endpoint, model

DAY = date(2026, 12, 3)


def recorded() -> Catalog:
    return Catalog({feed: PARSERS[feed](document(feed)) for feed in (OPENROUTER, MODELS_DEV, FREELLMAPI)})


def bench() -> ConfigState:
    return config(endpoint("groq", base="https://api.groq.com/openai/v1"),
                  endpoint("openai", base="https://api.openai.com/v1"),
                  model("versatile", served="llama-3.3-70b-versatile", endpoint="groq"),
                  model("mini-or", served="gpt-4o-mini", endpoint="openai"))


def rows(builds: list[tuple[date, Catalog]], today: date) -> dict[str, DiscoverRow]:
    """The list on `today` after a refresh on each day given, with that day's feeds (all fetched)."""
    seen = None
    for day, feeds in builds:
        fetched = {feed: Catalog({feed: entries}) for feed, entries in feeds.feeds.items()}
        seen = seen_after(seen, fetched, day)
    return {f"{r.provider}/{r.model}": r for r in discover(builds[-1][1], bench(), seen, today)}


def test_a99_an_own_app_only_provider_never_shows_free_rows() -> None:
    found = rows([(DAY, recorded())], DAY)
    assert "opencode/grok-code" not in found  # free on models.dev and FreeLLMAPI: only in opencode's app
    assert found["opencode/qwen3-coder"].free is False  # its paid rows stay


def test_a99_nothing_is_new_on_the_first_build_and_a_later_row_is_new_for_7_days() -> None:
    assert not any(r.new for r in rows([(DAY, recorded())], DAY).values())
    feeds = recorded().feeds
    feeds[FREELLMAPI].append(feeds[FREELLMAPI][0].model_copy(update={"id": "llama-5-preview"}))
    later, grown = DAY + timedelta(days=2), Catalog(feeds)
    fresh = rows([(DAY, recorded()), (later, grown)], later)
    assert [k for k, r in fresh.items() if r.new] == ["groq/llama-5-preview"]
    assert fresh["groq/llama-5-preview"].first_seen == later
    aged = rows([(DAY, recorded()), (later, grown)], later + timedelta(days=8))
    assert not aged["groq/llama-5-preview"].new


def test_rows_merge_the_feeds_and_say_how_far_each_is() -> None:
    found = rows([(DAY, recorded())], DAY)
    versatile = found["groq/llama-3.3-70b-versatile"]
    assert (versatile.reach, versatile.free, versatile.feeds) == ("on bench", True, [FREELLMAPI, MODELS_DEV])
    assert found["groq/moonshotai/kimi-k2-instruct"].reach == "connected"
    assert found["cerebras/gpt-oss-120b"].reach == "easy to add"
    assert found["openai/gpt-oss-120b"].reach == "connected"
    assert found["openrouter/openai/gpt-4o-mini"].also_on == ["mini-or"]
    assert "groq/mixtral-8x7b-32768" not in found  # deprecated
    assert "openai/text-embedding-3-small" not in found  # no text output


def test_free_first_then_new_then_reach_and_the_shown_filters() -> None:
    ordered = discover(recorded(), bench(), None, DAY)
    frees = [r.free for r in ordered]
    assert frees == sorted(frees, reverse=True)
    assert [r.reach for r in ordered if r.free][:1] == ["connected"]
    listed = shown(ordered)
    assert all(r.free or r.reach in ("connected", "on bench") for r in listed)
    assert "qwen3-coder" not in {r.model for r in listed}  # paid, on a provider this bench does not reach
    assert all(r.free for r in shown(ordered, free=True))
    assert shown(ordered, new=True) == []


def test_a99_a_feed_first_reached_late_is_a_baseline_too() -> None:
    """Days on the snapshot, then models.dev reached: its rows are not all new; FreeLLMAPI reached two days
    later neither; a row FreeLLMAPI adds after that is."""
    feeds = recorded().feeds
    seen = seen_after(None, {}, DAY)  # every feed down: nothing seen
    seen = seen_after(seen, {MODELS_DEV: Catalog({MODELS_DEV: feeds[MODELS_DEV]})}, DAY)
    later = DAY + timedelta(days=2)
    seen = seen_after(seen, {FREELLMAPI: Catalog({FREELLMAPI: feeds[FREELLMAPI]})}, later)
    assert not any(r.new for r in discover(recorded(), bench(), seen, later))
    grown = [*feeds[FREELLMAPI], feeds[FREELLMAPI][0].model_copy(update={"id": "llama-5-preview"})]
    seen = seen_after(seen, {FREELLMAPI: Catalog({FREELLMAPI: grown})}, later)
    catalog = Catalog({**feeds, FREELLMAPI: grown})
    assert [r.model for r in discover(catalog, bench(), seen, later) if r.new] == ["llama-5-preview"]

"""What the Onboarding, Discover and facts parts of the dashboard show, made without a server."""

from __future__ import annotations

from typing import Any

from services.console.dashboard.bench_views import (
    Controls,
    DiscoverFilters,
    add_route,
    age_text,
    discover_rows,
    fact_rows,
    queue_controls,
    step_text,
)


def item(state: str, step: int = 0) -> dict[str, Any]:
    return {"state": state, "step": step, "mode": "quick", "served": "a/b", "endpoint": "fake"}


def row(reach: str, endpoints: list[str], free: bool = True, new: bool = False, **more: Any
        ) -> dict[str, Any]:
    return {"provider": "fake", "model": "a/b", "reach": reach, "endpoints": endpoints, "free": free,
            "new": new, "cost": None, **more}


def test_an_item_says_where_it_is_in_the_five_steps() -> None:
    assert step_text(item("queued")) == "waiting its turn"
    assert step_text(item("running", 4)) == "step 4 of 5: probe"
    assert step_text(item("no answer", 4)) == "stopped at step 4 of 5: probe"
    assert step_text(item("skipped")) == "stopped before its first step"
    assert step_text(item("done", 4)) == "finished"


def test_stop_while_busy_clear_once_the_batch_has_finished() -> None:
    running = queue_controls([item("running", 2), item("queued")], stopping=False)
    assert (running.stop, running.clear) == (True, False)
    assert queue_controls([item("running", 2)], stopping=True).stop is False  # already stopping
    finished = queue_controls([item("done"), item("skipped")], stopping=False)
    assert (finished.stop, finished.clear) == (False, True)
    assert queue_controls([], stopping=False) == Controls(stop=False, clear=False)


def test_add_goes_through_the_endpoint_that_reaches_the_provider_or_says_why_not() -> None:
    assert add_route(row("connected", ["fake", "fake2"])) == ("fake", "")
    assert add_route(row("connected", ["fake", "fake2"]), "fake2") == ("fake2", "")
    assert add_route(row("connected", ["fake"]), "other")[1] == (
        "endpoint 'other' does not reach fake (those that do: fake)")
    assert add_route(row("on bench", ["fake"]))[1] == "a/b is on the bench already (through fake)"
    assert "add one for it" in add_route(row("easy to add", []))[1]
    assert add_route(row("other", []))[0] is None


def test_discover_filters_price_new_and_reach() -> None:
    rows = [row("connected", ["fake"], model="free-new", new=True),
            row("connected", ["fake"], free=False, model="paid", cost={"input": 0.5, "output": 2.0}),
            row("easy to add", [], model="far")]

    def names(filters: DiscoverFilters) -> list[str]:
        return [r["model"] for r in discover_rows(rows, filters)]

    assert names(DiscoverFilters()) == ["free-new", "paid", "far"]
    assert names(DiscoverFilters.of({"price": "paid"})) == ["paid"]
    assert names(DiscoverFilters.of({"price": "free", "new": "1"})) == ["free-new"]
    assert names(DiscoverFilters.of({"reach": "easy to add", "price": "nonsense"})) == ["far"]
    shown = {r["model"]: r for r in discover_rows(rows, DiscoverFilters())}
    assert shown["paid"]["price"] == "$0.5 in, $2 out per M tokens" and shown["free-new"]["price"] == "free"
    assert shown["far"]["route"] is None and "reaches fake" in shown["far"]["why"]


def test_a_feeds_age_reads_as_minutes_hours_or_days() -> None:
    assert [age_text(s) for s in (None, 59, 3_700, 200_000)] == ["never fetched", "0 min", "1 h 1 min",
                                                                 "2 days"]


def test_each_fact_shows_its_value_and_source_and_only_yours_can_be_cleared() -> None:
    facts: list[dict[str, Any]] = [
        {"fact": "context_window", "value": 32000, "source": "models.dev"},
        {"fact": "tools", "value": False, "source": "you"},
        {"fact": "cost", "value": {"input": 0.0, "output": 0.0}, "source": "models.dev"},
        {"fact": "knowledge_cutoff", "value": None, "source": None}]
    shown = [(f["label"], f["value"], f["source"], f["mine"]) for f in fact_rows(facts)]
    assert shown == [("context window", "32,000", "models.dev", False), ("tools", "no", "you", True),
                     ("cost", "$0 in, $0 out per M tokens", "models.dev", False),
                     ("knowledge cutoff", "unknown", "nobody yet", False)]

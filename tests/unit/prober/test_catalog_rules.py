"""CAT-1/CAT-3, decided without I/O: which catalog facts changed, and when `went paid` is raised (A-98) or
cleared; only the catalog's own alert is cleared when a model is free again."""

from __future__ import annotations

from datetime import UTC, datetime

from services.prober.catalog_rules import BY, catalog_facts, paid_alerts
from shared.alerts import paid_key
from shared.catalog.feeds import FeedEntry
from shared.catalog.merge import Catalog
from shared.config_state import ConfigState
from shared.events import AlertCleared, AlertRaised, CatalogApplied, ConfigEvent
from shared.model_facts import Cost
from tests.unit.factories import config, endpoint, model

AT = datetime(2026, 12, 3, 6, tzinfo=UTC)
SERVED = "vendor/fast:free"


def feeds(cost: Cost) -> Catalog:
    return Catalog({"models.dev": [FeedEntry(provider="fake", id=SERVED, context_window=32_000, cost=cost)]})


def bench() -> ConfigState:
    return config(endpoint("fake"), model("fast", served=SERVED), model("pics", role="image"))


def refreshed(state: ConfigState, cost: Cost) -> list[ConfigEvent]:
    changed = catalog_facts(state, feeds(cost), {})
    alerts = paid_alerts(state, changed)
    if changed:
        state.apply(CatalogApplied(id=f"cfg:{cost}", refreshed=AT, models=changed))
    for event in alerts:
        state.apply(event.model_copy(update={"id": f"cfg:{type(event).__name__}:{cost}"}))
    return alerts


def test_a98_free_then_priced_raises_went_paid_and_free_again_clears_it() -> None:
    state = bench()
    assert refreshed(state, Cost(input=0, output=0)) == []  # nothing known before: no transition
    raised = refreshed(state, Cost(input=0.2, output=0.8))
    assert [type(e) for e in raised] == [AlertRaised]
    alert = state.alerts[paid_key(SERVED)]
    assert (alert.kind, alert.by, alert.alias) == ("went paid", BY, "fast")
    assert refreshed(state, Cost(input=0.3, output=0.9)) == []  # priced to priced: it stays as it is
    assert [type(e) for e in refreshed(state, Cost(input=0, output=0))] == [AlertCleared]
    assert paid_key(SERVED) not in state.alerts


def test_free_again_leaves_an_alert_someone_else_raised() -> None:
    state = bench()
    refreshed(state, Cost(input=0.2, output=0.8))
    mine = AlertRaised(id="cfg:admin", by="admin", key=paid_key(SERVED), kind="went paid", message="mine")
    state.apply(mine)
    assert refreshed(state, Cost(input=0, output=0)) == []
    assert state.alerts[paid_key(SERVED)].by == "admin"


def test_only_chat_models_get_catalog_facts_and_only_changes_count() -> None:
    state = bench()
    changed = catalog_facts(state, feeds(Cost(input=0, output=0)), {})
    assert list(changed) == ["fast"]
    state.apply(CatalogApplied(id="cfg:c", refreshed=AT, models=changed))
    assert catalog_facts(state, feeds(Cost(input=0, output=0)), {}) == {}

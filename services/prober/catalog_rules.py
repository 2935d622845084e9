"""What a catalog refresh decides (CAT-1, CAT-3), from the folded configuration and the merged feeds:
which registered chat models' catalog facts changed, and which `went paid` alerts to raise or clear. Pure.

CAT-3 at refresh: a model whose previous catalog cost was free and whose new one is priced raises
`model:paid:<served>` (by `catalog`); free again clears it. The deprecations job sweeps only what it raised
itself (K-12), so the alert stands and the free-tier guard (U-5) holds the model until then.
"""

from __future__ import annotations

from collections.abc import Mapping

from services.prober.probes import NOT_PROBED_ROLES
from shared.alerts import paid_key
from shared.catalog.merge import Catalog, facts_for
from shared.commands import ListedModel
from shared.config_state import ConfigState
from shared.events import AlertCleared, AlertRaised, ConfigEvent
from shared.model_facts import Cost, ModelFacts

BY = "catalog"
PAID_ACTION = "check the provider; retire it or re-point it at a free slug"
Listings = Mapping[str, Mapping[str, ListedModel]]  # endpoint → served id → its own listing's entry


def catalog_facts(config: ConfigState, catalog: Catalog, listings: Listings) -> dict[str, ModelFacts]:
    """Each registered chat model's catalog facts, for those whose catalog layer would change."""
    changed: dict[str, ModelFacts] = {}
    for alias, model in config.models.items():
        endpoint, layers = config.endpoints.get(model.endpoint), config.facts.get(alias)
        if model.role in NOT_PROBED_ROLES or endpoint is None or layers is None:
            continue
        facts = facts_for(model.served, endpoint, catalog, listings.get(model.endpoint, {}).get(model.served))
        if facts != layers.catalog:
            changed[alias] = facts
    return changed


def price(cost: Cost) -> str:
    return f"${cost.input:g} in, ${cost.output:g} out per million tokens"


def paid_alerts(config: ConfigState, changed: Mapping[str, ModelFacts]) -> list[ConfigEvent]:
    """CAT-3: free → priced raises `went paid`; priced → free clears the catalog's own alert."""
    out: list[ConfigEvent] = []
    for alias, facts in changed.items():
        model, layers = config.models.get(alias), config.facts.get(alias)
        if model is None or layers is None or facts.cost is None:
            continue
        before, key = layers.catalog.cost, paid_key(model.served)
        up = config.alerts.get(key)
        if before is not None and before.free and not facts.cost.free:
            source = facts.sources.get("cost", "the catalog")
            message = f"{alias} ({model.served}) is listed with a price now: {price(facts.cost)} ({source})"
            out.append(AlertRaised(id="", by=BY, key=key, kind="went paid", alias=alias, action=PAID_ACTION,
                                   message=message))
        elif facts.cost.free and up is not None and up.by == BY:
            out.append(AlertCleared(id="", by=BY, key=key))
    return out

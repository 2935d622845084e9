"""The configuration fold: endpoints, models, collections, settings and alerts as of some stream sequence.

Every service folds the same `bench.ev.config` events through `ConfigState.apply`, so the gateway, the
seater and the callers agree on what a collection or an endpoint is. Pure: no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from shared.alerts import Alert, served_of
from shared.events import (
    AlertCleared,
    AlertRaised,
    CatalogApplied,
    CollectionRemoved,
    CollectionSaved,
    ConnectionsSaved,
    EndpointRemoved,
    EndpointSaved,
    EventBase,
    GatewayKeyCreated,
    GatewayKeyRevoked,
    GatewaySettingsSaved,
    LimitsSaved,
    ModelFactsSet,
    ModelLearned,
    ModelRegistered,
    ModelRestored,
    ModelRetired,
    ModelUpdated,
    SchedulerSaved,
)
from shared.model_facts import REGISTRATION, FactLayers, ModelFacts, stamped, with_user

DEFAULT_MAX_CALLS = 5
DEFAULT_MAX_EXPLORERS = 2
LIMIT_AXES = ("rpm", "rpd", "tpm", "tpd", "rpmo")


@dataclass
class RetiredModel:
    model: ModelRegistered
    at: datetime
    why: str
    collections: dict[str, list[str]]


@dataclass
class ConfigState:
    endpoints: dict[str, EndpointSaved] = field(default_factory=dict)
    models: dict[str, ModelRegistered] = field(default_factory=dict)  # alias → registration, in order
    retired: dict[str, RetiredModel] = field(default_factory=dict)
    collections: dict[str, CollectionSaved] = field(default_factory=dict)
    max_calls: int = DEFAULT_MAX_CALLS
    max_explorers: int = DEFAULT_MAX_EXPLORERS
    # L-1 (a)/(b): user limits by connection name and by model alias.
    connection_limits: dict[str, LimitsSaved] = field(default_factory=dict)
    model_limits: dict[str, LimitsSaved] = field(default_factory=dict)
    # C-5: every alias a rename left behind → the alias it became (never reused).
    renamed: dict[str, str] = field(default_factory=dict)
    # SEC-4: gateway keys by name, and their names by SHA-256 hex.
    gateway_keys: dict[str, GatewayKeyCreated] = field(default_factory=dict)
    key_hashes: dict[str, str] = field(default_factory=dict)
    # C-16: active alerts by key; U-5: what the free-tier guard lets through anyway (connections.json).
    alerts: dict[str, Alert] = field(default_factory=dict)
    allow_paid: list[str] = field(default_factory=list)
    # HL-3: the capabilities probes found, by alias (`tools`, `reasoning`); only positives are learned.
    learned: dict[str, set[str]] = field(default_factory=dict)
    # HL-7: the scheduler's settings as last saved; None until someone sets them (the environment decides).
    scheduler: SchedulerSaved | None = None
    # C-15: each model's facts, layer by layer (kept while retired); `models` holds the effective window,
    # output limit, tools and vision, so every rule that reads a registration reads the effective facts.
    facts: dict[str, FactLayers] = field(default_factory=dict)
    catalog_refreshed: datetime | None = None
    seq: int = 0  # last stream sequence of a config event folded

    def decision_model(self) -> ModelRegistered | None:
        """The shape picker (P-4, C-9): the first registered decision model that is not ad hoc and whose
        endpoint is saved. The gateway reads it too, to know whether a plan may wait for the picker."""
        for model in self.models.values():
            if model.role == "decision" and not model.ad_hoc and model.endpoint in self.endpoints:
                return model
        return None

    def apply(self, event: EventBase, seq: int = 0) -> None:
        """Fold one event with its type's handler; an event of a type with none (not about configuration)
        only moves `seq` on."""
        if seq and seq <= self.seq:
            return
        handler = next((APPLY[base] for base in type(event).__mro__ if base in APPLY), None)
        if handler is not None:
            handler(self, event)
        if seq:
            self.seq = seq

    def _save_endpoint(self, event: EndpointSaved) -> None:
        if event.default:
            for name, ep in list(self.endpoints.items()):
                if ep.default and name != event.name:
                    self.endpoints[name] = ep.model_copy(update={"default": False})
        self.endpoints[event.name] = event

    def _remove_endpoint(self, event: EndpointRemoved) -> None:
        if event.retire_models:
            for alias in [a for a, m in self.models.items() if m.endpoint == event.name]:
                self._retire(ModelRetired(id=event.id, at=event.at, by=event.by, alias=alias,
                                          why=f"its endpoint {event.name} was removed"))
        self.endpoints.pop(event.name, None)

    def _register_model(self, event: ModelRegistered) -> None:
        self.retired.pop(event.alias, None)
        typed = {"context_window": event.context_window, "max_output": event.max_output,
                 "vision": event.vision, "tools": event.tools}
        self.facts[event.alias] = FactLayers(catalog=event.facts or ModelFacts(),
                                             registration=stamped(typed, REGISTRATION))
        self.models[event.alias] = event
        self._refresh_facts(event.alias)

    def _set_facts(self, event: ModelFactsSet) -> None:
        layers = self.facts.get(event.alias)
        if layers is None or event.alias not in self.models:
            return
        layers.user = with_user(layers.user, event.facts, list(event.clear))
        self._refresh_facts(event.alias)

    def _apply_catalog(self, event: CatalogApplied) -> None:
        self.catalog_refreshed = event.refreshed
        for alias, facts in event.models.items():
            layers = self.facts.get(alias)
            if layers is not None:
                layers.catalog = facts
                self._refresh_facts(alias)

    def learn_window(self, alias: str, window: int, at: datetime) -> None:
        """L-3/CAT-1: a context window a provider's error stated (`limit_learned`, axis `context`); it only
        ever lowers the model's window. Fed by the processes that fold `bench.ev.limit.>`."""
        layers = self.facts.get(alias)
        if layers is not None and layers.learn_window(window, at.date()):
            self._refresh_facts(alias)

    def _refresh_facts(self, alias: str) -> None:
        """Put the effective facts the rules read (window, output limit, tools, vision) on the model."""
        model, layers = self.models.get(alias), self.facts.get(alias)
        if model is None or layers is None:
            return
        now = layers.effective()
        self.models[alias] = model.model_copy(update={
            "context_window": now.context_window, "max_output": now.max_output, "vision": now.vision,
            "tools": now.tools,
        })

    def _create_key(self, event: GatewayKeyCreated) -> None:
        self._revoke(event)
        self.gateway_keys[event.name] = event
        self.key_hashes[event.hash] = event.name

    def _save_collection(self, event: CollectionSaved) -> None:
        self.collections[event.name] = event

    def _remove_collection(self, event: CollectionRemoved) -> None:
        self.collections.pop(event.name, None)

    def _save_settings(self, event: GatewaySettingsSaved) -> None:
        self.max_calls, self.max_explorers = event.max_calls, event.max_explorers

    def _save_connections(self, event: ConnectionsSaved) -> None:
        self.allow_paid = list(dict.fromkeys(event.allow_paid))

    def _save_scheduler(self, event: SchedulerSaved) -> None:
        self.scheduler = event

    def _learn(self, event: ModelLearned) -> None:
        model = self.models.get(event.alias)
        if model is None:
            return
        found = {name for name in ("tools", "reasoning") if getattr(event, name)}
        self.learned.setdefault(event.alias, set()).update(found)
        layers = self.facts.setdefault(event.alias, FactLayers())
        layers.probed.update(dict.fromkeys(found, event.source or "probe"))
        self._refresh_facts(event.alias)

    def _clear_alert(self, event: AlertCleared) -> None:
        self.alerts.pop(event.key, None)

    def _save_limits(self, event: LimitsSaved) -> None:
        book = self.connection_limits if event.scope == "connection" else self.model_limits
        if any(getattr(event, axis) for axis in LIMIT_AXES):
            book[event.name] = event
        else:
            book.pop(event.name, None)

    def _raise(self, event: AlertRaised) -> None:
        """C-16: keyed, so raising it again refreshes it and keeps when it was first seen."""
        before = self.alerts.get(event.key)
        self.alerts[event.key] = Alert(
            key=event.key, kind=event.kind, message=event.message, action=event.action,
            first_seen=before.first_seen if before else event.at, last_seen=event.at, by=event.by,
            alias=event.alias, aliases=list(event.aliases),
        )

    def _clear_model_alerts(self, alias: str, served: str) -> None:
        """C-14: retiring a model clears its `model:*` alerts: those naming its alias, and those on its
        served id unless another model on the bench still serves it."""
        still_served = any(m.served == served for m in self.models.values())
        for key, alert in list(self.alerts.items()):
            named = served_of(key)
            if named is not None and (alert.alias == alias or (named == served and not still_served)):
                del self.alerts[key]

    def _revoke(self, event: GatewayKeyCreated | GatewayKeyRevoked) -> None:
        """A key created again under its name replaces the old one, whose hash stops opening anything."""
        old = self.gateway_keys.pop(event.name, None)
        if old is not None:
            self.key_hashes.pop(old.hash, None)

    def _update_model(self, event: ModelUpdated) -> None:
        model = self.models.get(event.alias)
        if model is None:
            return
        update: dict[str, object] = {}
        if event.role is not None:
            update["role"] = event.role
        if event.ad_hoc is not None:
            update["ad_hoc"] = event.ad_hoc
        if event.options is not None:
            update["max_tokens"] = event.options.max_tokens
        model = model.model_copy(update=update)
        if not event.new_alias or event.new_alias == event.alias:
            self.models[event.alias] = model
            return
        self._rename(event.alias, event.new_alias, model)

    def _rename(self, old: str, new: str, model: ModelRegistered) -> None:
        """Move everything keyed by the alias, keeping the model's place in the registry's order."""
        moved = model.model_copy(update={"alias": new})
        order = [(new if a == old else a, moved if a == old else m) for a, m in self.models.items()]
        self.models.clear()
        self.models.update(order)
        for name, col in list(self.collections.items()):
            if old in col.members or col.merger == old or old in col.shadows:
                members = [new if m == old else m for m in col.members]
                merger = new if col.merger == old else col.merger
                shadows = [new if m == old else m for m in col.shadows]
                self.collections[name] = col.model_copy(
                    update={"members": members, "merger": merger, "shadows": shadows}
                )
        if old in self.learned:
            self.learned[new] = self.learned.pop(old)
        if old in self.facts:
            self.facts[new] = self.facts.pop(old)
        if old in self.model_limits:
            self.model_limits[new] = self.model_limits.pop(old).model_copy(update={"name": new})
        self.allow_paid = [new if a == old else a for a in self.allow_paid]
        for key, alert in list(self.alerts.items()):
            if alert.alias == old or old in alert.aliases:
                self.alerts[key] = replace(alert, alias=new if alert.alias == old else alert.alias,
                                           aliases=[new if a == old else a for a in alert.aliases])
        for earlier, later in self.renamed.items():
            if later == old:
                self.renamed[earlier] = new
        self.renamed[old] = new

    def _restore(self, event: ModelRestored) -> None:
        alias = event.alias
        record = self.retired.pop(alias, None)
        if record is None:
            return
        self.models[alias] = record.model
        self._refresh_facts(alias)
        for name, places in record.collections.items():
            col = self.collections.get(name)
            if col is None:
                continue
            update: dict[str, object] = {}
            if "members" in places and alias not in col.members and len(col.members) < self.max_calls:
                update["members"] = [*col.members, alias]
            if "merger" in places and not col.merger:
                update["merger"] = alias
            if "shadows" in places and alias not in col.shadows:
                update["shadows"] = [*col.shadows, alias]
            if update:
                self.collections[name] = col.model_copy(update=update)

    def _retire(self, event: ModelRetired) -> None:
        model = self.models.pop(event.alias, None)
        if model is None:
            return
        places: dict[str, list[str]] = {}
        for name, col in list(self.collections.items()):
            where = []
            update: dict[str, object] = {}
            if event.alias in col.members:
                where.append("members")
                update["members"] = [m for m in col.members if m != event.alias]
            if col.merger == event.alias:
                where.append("merger")
                update["merger"] = ""
            if event.alias in col.shadows:
                where.append("shadows")
                update["shadows"] = [m for m in col.shadows if m != event.alias]
            if where:
                places[name] = where
                self.collections[name] = col.model_copy(update=update)
        self.retired[event.alias] = RetiredModel(model=model, at=event.at, why=event.why, collections=places)
        self._clear_model_alerts(event.alias, model.served)

    # ------------------------------------------------------------ reads

    def current_alias(self, alias: str) -> str:
        """C-5: what an alias is called now (renames followed); itself if never renamed."""
        return self.renamed.get(alias, alias)

    def facts_of(self, alias: str) -> ModelFacts | None:
        """C-15: the model's effective facts, each with its source; None for an alias never registered."""
        layers = self.facts.get(alias)
        return layers.effective() if layers is not None else None

    def fact_source(self, alias: str, name: str) -> str:
        facts = self.facts_of(alias)
        return facts.sources.get(name, "nobody") if facts is not None else "nobody"

    def connection_of(self, alias: str) -> str:
        """C-6: what shares a rate limit; for now the endpoint a model is registered on."""
        model = self.models.get(alias)
        return model.endpoint if model else "?"

    def default_endpoint(self) -> str | None:
        for name, ep in self.endpoints.items():
            if ep.default:
                return name
        return next(iter(self.endpoints), None)

    def explorer_count(self, members: int) -> int:
        """C-11: explorers = max(0, min(max_explorers, max_calls − members))."""
        return max(0, min(self.max_explorers, self.max_calls - members))


# One handler per configuration event type: adding a type is adding its handler here.
APPLY: dict[type[EventBase], Callable[[ConfigState, Any], None]] = {
    EndpointSaved: ConfigState._save_endpoint,
    EndpointRemoved: ConfigState._remove_endpoint,
    ModelRegistered: ConfigState._register_model,
    ModelRetired: ConfigState._retire,
    ModelUpdated: ConfigState._update_model,
    ModelRestored: ConfigState._restore,
    GatewayKeyCreated: ConfigState._create_key,
    GatewayKeyRevoked: ConfigState._revoke,
    CollectionSaved: ConfigState._save_collection,
    CollectionRemoved: ConfigState._remove_collection,
    GatewaySettingsSaved: ConfigState._save_settings,
    LimitsSaved: ConfigState._save_limits,
    ConnectionsSaved: ConfigState._save_connections,
    AlertRaised: ConfigState._raise,
    AlertCleared: ConfigState._clear_alert,
    SchedulerSaved: ConfigState._save_scheduler,
    ModelLearned: ConfigState._learn,
    ModelFactsSet: ConfigState._set_facts,
    CatalogApplied: ConfigState._apply_catalog,
}


@functools.lru_cache(maxsize=4096)
def family(served: str) -> str:
    """C-6: the served id's last path segment before `:`, lower-cased, without `-_.` (kept per id: a plan
    asks it for every model of the bench)."""
    last = served.rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return "".join(ch for ch in last if ch not in "-_.")

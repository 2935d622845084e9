"""The configuration fold: endpoints, models, collections and gateway settings as of some stream sequence.

Every service folds the same `bench.ev.config` events through `ConfigState.apply`, so the gateway, the
seater and the callers agree on what a collection or an endpoint is. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from shared.events import (
    CollectionRemoved,
    CollectionSaved,
    EndpointRemoved,
    EndpointSaved,
    EventBase,
    GatewaySettingsSaved,
    LimitsSaved,
    ModelRegistered,
    ModelRetired,
)

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
    seq: int = 0  # last stream sequence of a config event folded

    def apply(self, event: EventBase, seq: int = 0) -> None:
        if seq and seq <= self.seq:
            return
        if isinstance(event, EndpointSaved):
            if event.default:
                for name, ep in list(self.endpoints.items()):
                    if ep.default and name != event.name:
                        self.endpoints[name] = ep.model_copy(update={"default": False})
            self.endpoints[event.name] = event
        elif isinstance(event, EndpointRemoved):
            self.endpoints.pop(event.name, None)
        elif isinstance(event, ModelRegistered):
            self.retired.pop(event.alias, None)
            self.models[event.alias] = event
        elif isinstance(event, ModelRetired):
            self._retire(event)
        elif isinstance(event, CollectionSaved):
            self.collections[event.name] = event
        elif isinstance(event, CollectionRemoved):
            self.collections.pop(event.name, None)
        elif isinstance(event, GatewaySettingsSaved):
            self.max_calls, self.max_explorers = event.max_calls, event.max_explorers
        elif isinstance(event, LimitsSaved):
            self._save_limits(event)
        if seq:
            self.seq = seq

    def _save_limits(self, event: LimitsSaved) -> None:
        book = self.connection_limits if event.scope == "connection" else self.model_limits
        if any(getattr(event, axis) for axis in LIMIT_AXES):
            book[event.name] = event
        else:
            book.pop(event.name, None)

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
            if where:
                places[name] = where
                self.collections[name] = col.model_copy(update=update)
        self.retired[event.alias] = RetiredModel(model=model, at=event.at, why=event.why, collections=places)

    # ------------------------------------------------------------ reads

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


def family(served: str) -> str:
    """C-6: the served id's last path segment before `:`, lower-cased, without `-_.`."""
    last = served.rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return "".join(ch for ch in last if ch not in "-_.")

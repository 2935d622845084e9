"""Builders for the seater's pure tests: configuration folded from real config events, and plan requests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from shared.commands import PlanRequest
from shared.config_state import ConfigState
from shared.events import (
    CollectionSaved,
    EndpointSaved,
    GatewaySettingsSaved,
    ModelRegistered,
    ModelRetired,
)

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def model(alias: str, served: str | None = None, endpoint: str = "ep", **fields: Any) -> ModelRegistered:
    """A registration whose family is its alias unless `served` says otherwise."""
    return ModelRegistered(id=f"cfg:model:{alias}", at=T0, alias=alias, served=served or f"org/{alias}",
                           endpoint=endpoint, **fields)


def collection(name: str, members: list[str], when: datetime = T0, **fields: Any) -> CollectionSaved:
    return CollectionSaved(id=f"cfg:col:{name}:{when.isoformat()}", at=when, name=name, members=members,
                           **fields)


def retire(alias: str, when: datetime) -> ModelRetired:
    return ModelRetired(id=f"cfg:retire:{alias}", at=when, alias=alias, why="test")


def bench(
    models: list[ModelRegistered], *collections: CollectionSaved, max_calls: int = 5, max_explorers: int = 2,
    endpoints: dict[str, Literal["chat", "responses"]] | None = None,
) -> ConfigState:
    """A configuration folded the way every service folds it."""
    state = ConfigState()
    for name, api in (endpoints or {"ep": "chat"}).items():
        base = f"http://{name}.test/v1"
        state.apply(EndpointSaved(id=f"cfg:ep:{name}", at=T0, name=name, base=base, api=api))
    state.apply(GatewaySettingsSaved(id="cfg:gw", at=T0, max_calls=max_calls, max_explorers=max_explorers))
    for registration in models:
        state.apply(registration)
    for col in collections:
        state.apply(col)
    return state


def ask(collection: str = "core", nominees: tuple[str, ...] = (), **fields: Any) -> PlanRequest:
    """A plan request; `nominees` is the request's `with` list."""
    return PlanRequest(collection=collection, with_=list(nominees), **fields)

"""The admin API's JSON views of the configuration (never a key: the gateway holds none). Pure."""

from __future__ import annotations

from typing import Any

from shared.collection_traits import together
from shared.config_rules.base import COLLECTION_SHAPES
from shared.config_state import ConfigState
from shared.events import CollectionSaved, EndpointSaved, EventBase, ModelRegistered
from shared.provider_keys import key_variable

META = {"id", "v", "at", "by", "type"}


def fields(event: EventBase) -> dict[str, Any]:
    return event.model_dump(mode="json", exclude=META, by_alias=True)


def endpoint_view(ep: EndpointSaved, state: ConfigState) -> dict[str, Any]:
    return {
        **fields(ep),
        "default": state.default_endpoint() == ep.name,
        "key_variable": key_variable(ep.name),
        "models": sum(1 for m in state.models.values() if m.endpoint == ep.name),
    }


def model_view(model: ModelRegistered, state: ConfigState) -> dict[str, Any]:
    return {**fields(model), "connection": state.connection_of(model.alias), "retired": False}


def collection_view(col: CollectionSaved, state: ConfigState) -> dict[str, Any]:
    return {
        **fields(col),
        "explorers": state.explorer_count(len(col.members)),
        "together": together(col, state),
    }


def endpoints(state: ConfigState) -> list[dict[str, Any]]:
    return [endpoint_view(ep, state) for ep in state.endpoints.values()]


def models(state: ConfigState) -> list[dict[str, Any]]:
    rows = [model_view(m, state) for m in state.models.values()]
    for alias, record in state.retired.items():
        rows.append({
            **fields(record.model), "alias": alias, "connection": record.model.endpoint, "retired": True,
            "retired_at": record.at.isoformat(), "retired_why": record.why,
            "retired_from": record.collections,
        })
    return rows


def collections(state: ConfigState) -> dict[str, Any]:
    return {
        "collections": [collection_view(state.collections[n], state) for n in sorted(state.collections)],
        "settings": settings(state),
        "shapes": list(COLLECTION_SHAPES),
    }


def settings(state: ConfigState) -> dict[str, int]:
    return {"max_calls": state.max_calls, "max_explorers": state.max_explorers}

"""Endpoint writes beyond the plain save (O-5, H-D3): what a save may not change, removal and the default.
Pure."""

from __future__ import annotations

from typing import Any

from shared.config_rules.base import Conflict, Invalid, Missing, Rule, save_endpoint, unknown_fields
from shared.config_state import ConfigState
from shared.events import ConfigEvent, EndpointRemoved, EndpointSaved
from shared.ids import utcnow


def models_on(name: str, state: ConfigState) -> list[str]:
    return [alias for alias, m in state.models.items() if m.endpoint == name]


def save_checked(body: dict[str, Any]) -> Rule:
    """O-5: a saved endpoint keeps its base (the callers send its key only to its saved base, so its list at
    another base, which a save needs first, would be refused: it is removed and added again instead); `api`
    is set on new endpoints only."""
    plain = save_endpoint(body)

    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors: list[str] = []
        try:
            event = plain(state, event_id)
        except Invalid as invalid:
            errors, event = invalid.errors, None
        current = state.endpoints.get(body.get("name", "")) if isinstance(body.get("name"), str) else None
        if current is not None and isinstance(event, EndpointSaved):
            on_it = models_on(current.name, state)
            if event.base != current.base and on_it:
                errors.append(f"{current.name} serves {', '.join(on_it)}: its base cannot change while "
                              "models are registered on it (retire them, or add a new endpoint)")
            elif event.base != current.base:
                errors.append(f"{current.name}'s base cannot change: the callers send its key only to its "
                              "saved base, so remove it and add it again with the new base")
            if "api" in body and event.api != current.api:
                errors.append(f'"api" is set when an endpoint is added; {current.name} stays {current.api}')
            if "api" not in body:
                event = event.model_copy(update={"api": current.api})
        if errors or event is None:
            raise Invalid(errors)
        return event

    return rule


def existing(name: Any, state: ConfigState, errors: list[str]) -> str:
    if not isinstance(name, str) or name not in state.endpoints:
        known = ", ".join(sorted(state.endpoints)) or "none yet"
        errors.append(Missing(f"no endpoint named {name!r} (endpoints: {known})"))
        return ""
    return name


def remove_endpoint(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("name", "with_models"))
        name = existing(body.get("name"), state, errors)
        with_models = body.get("with_models", False) is True
        if name and state.default_endpoint() == name and len(state.endpoints) > 1:
            errors.append(f"{name} is the default endpoint: make another one the default first")
        on_it = models_on(name, state) if name else []
        if on_it and not with_models:
            errors.append(Conflict(f"{name} serves {', '.join(on_it)}: remove it with_models to retire them "
                                   "too (they can be restored later)"))
        if errors:
            raise Invalid(errors)
        return EndpointRemoved(id=event_id, name=name, retire_models=bool(on_it))

    return rule


def make_default(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("name",))
        name = existing(body.get("name"), state, errors)
        if errors:
            raise Invalid(errors)
        return state.endpoints[name].model_copy(update={"id": event_id, "default": True, "at": utcnow()})

    return rule

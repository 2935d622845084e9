"""L-1 (a)/(b): the user's limits for a connection or one model, saved as `LimitsSaved`. Pure."""

from __future__ import annotations

from typing import Any

from shared.config_rules.base import NOT_CHAT_ROLES, Invalid, Missing, Rule, unknown_fields
from shared.config_state import LIMIT_AXES, ConfigState
from shared.events import ConfigEvent, LimitsSaved

MODEL_AXES = ("rpm", "rpd", "tpm", "tpd")


def chat_connections(state: ConfigState) -> dict[str, list[str]]:
    """Each connection a chat model uses, with its models."""
    found: dict[str, list[str]] = {}
    for alias, model in state.models.items():
        if model.role not in NOT_CHAT_ROLES:
            found.setdefault(state.connection_of(alias), []).append(alias)
    return found


def limit_values(raw: Any, axes: tuple[str, ...], errors: list[str]) -> dict[str, int | None]:
    if not isinstance(raw, dict):
        errors.append('"limits" must be an object of ' + ", ".join(axes))
        return {}
    extra = sorted(set(raw) - set(axes))
    if extra:
        errors.append(f"limits take {', '.join(axes)} (not {', '.join(extra)})")
    values: dict[str, int | None] = {}
    for axis in axes:
        value = raw.get(axis)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            errors.append(f'"{axis}" must be a positive whole number or null (no limit)')
        else:
            values[axis] = value
    return values


def connection_limits(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("connection", "limits"))
        name = body.get("connection")
        known = chat_connections(state)
        if name not in known:
            errors.append(Missing(f"{name!r} is not a connection a chat model uses (connections: "
                                  f"{', '.join(sorted(known)) or 'none yet'})"))
        values = limit_values(body.get("limits"), LIMIT_AXES, errors)
        if errors:
            raise Invalid(errors)
        return LimitsSaved(id=event_id, scope="connection", name=name, **values)

    return rule


def model_limits(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("alias", "limits"))
        alias = body.get("alias")
        if not isinstance(alias, str) or alias not in state.models:
            errors.append(Missing(f"no model with alias {alias!r} on the bench"))
        values = limit_values(body.get("limits"), MODEL_AXES, errors)
        if errors:
            raise Invalid(errors)
        return LimitsSaved(id=event_id, scope="model", name=alias, **values)

    return rule

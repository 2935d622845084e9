"""Alerts raised and cleared by hand (C-16), and the free-tier guard's allow list (U-5, connections.json
`allow_paid`). Pure: each rule reads a body and the folded configuration and returns one config event, or
raises `Invalid` with every reason (a clear of a key that is not up is a 404).

The catalog refresh (CAT-3) will raise `went paid` itself once the prober exists; until then an admin does.
"""

from __future__ import annotations

from typing import Any

from shared.alerts import KEY_PREFIXES, KINDS, kind_of
from shared.config_rules.base import Invalid, Missing, Rule, unknown_fields
from shared.config_state import ConfigState
from shared.events import AlertCleared, AlertRaised, ConfigEvent, ConnectionsSaved

KEY_MAX = 300
TEXT_MAX = 300
ALLOW_MAX = 200
NAME_MAX = 200
SHAPES = ", ".join(f"{p}<…>" for prefixes in KEY_PREFIXES.values() for p in prefixes)


def printable(value: str) -> bool:
    return value.isprintable() and value == value.strip()


def allowable(name: Any) -> bool:
    return isinstance(name, str) and 0 < len(name) <= NAME_MAX and printable(name) and " " not in name


def check_key(key: Any, errors: list[str]) -> str:
    if not isinstance(key, str) or not key or len(key) > KEY_MAX or not printable(key) or " " in key:
        errors.append(f'"key" must be an alert key of up to {KEY_MAX} characters without spaces ({SHAPES})')
        return ""
    if kind_of(key) is None:
        errors.append(f"{key!r} is not an alert key: keys look like {SHAPES}")
        return ""
    return key


def text(body: dict[str, Any], name: str, errors: list[str], required: bool) -> str:
    value = body.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip() or len(value) > TEXT_MAX or not value.isprintable():
        need = "" if required else " or null"
        errors.append(f'"{name}" must be one line of text, 1 to {TEXT_MAX} characters{need}')
        return ""
    return value.strip()


def known_alias(alias: Any, state: ConfigState, errors: list[str]) -> str:
    if not isinstance(alias, str) or alias not in state.models:
        errors.append(f"no model with alias {alias!r} on the bench")
        return ""
    return alias


def raise_alert(body: dict[str, Any]) -> Rule:
    """Raise `key` (again): the kind, when sent, must be the one its key shape belongs to."""

    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("key", "kind", "message", "action", "alias", "aliases"))
        key = check_key(body.get("key"), errors)
        kind = body.get("kind")
        if kind is not None and kind not in KINDS:
            errors.append(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
        elif key and kind is not None and kind != kind_of(key):
            errors.append(f"{key!r} is a {kind_of(key)!r} key, not {kind!r}")
        message = text(body, "message", errors, required=True)
        action = text(body, "action", errors, required=False)
        alias = body.get("alias")
        alias = known_alias(alias, state, errors) if alias is not None else None
        aliases = body.get("aliases") or []
        if not isinstance(aliases, list):
            errors.append('"aliases" must be a list of model aliases')
            aliases = []
        aliases = [known_alias(a, state, errors) for a in dict.fromkeys(aliases)]
        found = kind_of(key)
        if errors or found is None:
            raise Invalid(errors)
        return AlertRaised(id=event_id, key=key, kind=found, message=message, action=action,
                           alias=alias, aliases=aliases)

    return rule


def clear_alert(key: Any) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors: list[str] = []
        checked = check_key(key, errors)
        if errors:
            raise Invalid(errors)
        if checked not in state.alerts:
            raise Invalid([Missing(f"no alert is up under {checked!r}")])
        return AlertCleared(id=event_id, key=checked)

    return rule


def save_allow_paid(body: dict[str, Any]) -> Rule:
    """Replace the list of aliases or served ids the free-tier guard lets through (U-5)."""

    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("allow_paid",))
        names = body.get("allow_paid")
        if not isinstance(names, list) or len(names) > ALLOW_MAX or not all(map(allowable, names)):
            errors.append(f'"allow_paid" must be a list of up to {ALLOW_MAX} aliases or served ids '
                          f"(no spaces, at most {NAME_MAX} characters each); [] allows none")
            names = []
        if errors:
            raise Invalid(errors)
        return ConnectionsSaved(id=event_id, allow_paid=list(dict.fromkeys(names)))

    return rule

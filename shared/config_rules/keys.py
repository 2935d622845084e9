"""Gateway keys made and revoked (SEC-4). Pure: the key itself is drawn before the rule runs (a retried
write keeps it), and only its hash and last four characters go into the event."""

from __future__ import annotations

import hashlib
from typing import Any

from shared.config_rules.base import (
    NAME_RE,
    Conflict,
    Invalid,
    Missing,
    Rule,
    is_int,
    strip_bench,
    unknown_fields,
)
from shared.config_state import ConfigState
from shared.events import ConfigEvent, GatewayKeyCreated, GatewayKeyRevoked


def key_hash(key: str) -> str:
    """What a gateway key is kept as: the rule that makes a key and the guard that checks one share it."""
    return hashlib.sha256(key.encode()).hexdigest()

RPM_RANGE = (1, 10_000)


def create_key(body: dict[str, Any], key: str) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("name", "collections", "rpm"))
        name = body.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name) or name == "local":
            errors.append("a key's name must be 2-32 characters of a-z, 0-9 and -, starting with a letter "
                          f"or digit, and not 'local' (got {name!r})")
        elif name in state.gateway_keys:
            errors.append(Conflict(f"a key named {name!r} exists; revoke it first or pick another name"))
        collections = body.get("collections")
        scope: list[str] | None = None
        if collections is not None:
            if not isinstance(collections, list) or not all(isinstance(c, str) for c in collections):
                errors.append('"collections" must be a list of collection names')
            else:
                scope = sorted({strip_bench(c) for c in collections})
                unknown = [c for c in scope if c not in state.collections]
                if unknown:
                    errors.append(f"no collection named {', '.join(unknown)}")
        rpm = body.get("rpm")
        low, high = RPM_RANGE
        if rpm is not None and (not is_int(rpm) or not low <= rpm <= high):
            errors.append(f'"rpm" must be a whole number from {low} to {high:,}, or null (no cap)')
        if errors:
            raise Invalid(errors)
        return GatewayKeyCreated(id=event_id, name=name, hash=key_hash(key), hint=key[-4:], collections=scope,
                                 rpm=rpm)

    return rule


def revoke_key(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("name",))
        name = body.get("name")
        if not isinstance(name, str) or name not in state.gateway_keys:
            errors.append(Missing(f"no gateway key named {name!r}"))
        if errors:
            raise Invalid(errors)
        return GatewayKeyRevoked(id=event_id, name=name)

    return rule

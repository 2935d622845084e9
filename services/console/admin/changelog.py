"""The change log (C-17): every configuration event as field changes {at, by, kind, name, field, old, new},
found by comparing each event with the configuration it changed. Pure; never a secret (gateway key hashes,
hints and header values are left out).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from shared.config_state import LIMIT_AXES, ConfigState
from shared.events import (
    AlertCleared,
    AlertRaised,
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
    ModelRegistered,
    ModelRestored,
    ModelRetired,
    ModelUpdated,
)

KEEP = 5000
META = {"id", "v", "at", "by", "type"}


def shown(event: EventBase) -> dict[str, Any]:
    fields: dict[str, Any] = event.model_dump(mode="json", exclude=META, by_alias=True)
    if isinstance(fields.get("headers"), dict):
        fields["headers"] = sorted(fields["headers"])  # names only: a value may be a credential
    return fields


Diff = list[tuple[str, Any, Any]]


def differences(old: dict[str, Any], new: dict[str, Any], skip: tuple[str, ...] = ()) -> Diff:
    return [(k, old.get(k), new.get(k)) for k in new if k not in skip and old.get(k) != new.get(k)]


class ChangeLog:
    def __init__(self) -> None:
        self.state = ConfigState()
        self.changes: deque[dict[str, Any]] = deque(maxlen=KEEP)

    def apply(self, event: EventBase, seq: int) -> None:
        for kind, name, field, old, new in self.describe(event):
            self.changes.append({"seq": seq, "at": event.at, "by": event.by, "kind": kind, "name": name,
                                 "field": field, "old": old, "new": new})
        self.state.apply(event, seq)

    def newest(self, limit: int) -> list[dict[str, Any]]:
        return list(reversed(self.changes))[:limit]

    def describe(self, e: EventBase) -> list[tuple[str, str, str, Any, Any]]:
        s = self.state
        if isinstance(e, EndpointSaved):
            before = s.endpoints.get(e.name)
            if before is None:
                return [("endpoint", e.name, "added", None, e.base)]
            changed = differences(shown(before), shown(e), ("name",))
            return [("endpoint", e.name, f, o, n) for f, o, n in changed]
        if isinstance(e, EndpointRemoved):
            gone = s.endpoints.get(e.name)
            return [("endpoint", e.name, "removed", gone.base if gone else None, None)]
        if isinstance(e, ModelRegistered):
            return [("model", e.alias, "registered", None, f"{e.served} on {e.endpoint}")]
        if isinstance(e, ModelRetired):
            return [("model", e.alias, "retired", None, e.why or "retired")]
        if isinstance(e, ModelRestored):
            return [("model", e.alias, "restored", None, "back on the bench")]
        if isinstance(e, ModelUpdated):
            return self.model_update(e)
        if isinstance(e, CollectionSaved):
            before_col = s.collections.get(e.name)
            if before_col is None:
                return [("collection", e.name, "created", None, list(e.members))]
            return [("collection", e.name, f, o, n)
                    for f, o, n in differences(shown(before_col), shown(e), ("name",))]
        if isinstance(e, CollectionRemoved):
            return [("collection", e.name, "removed", None, None)]
        if isinstance(e, GatewaySettingsSaved):
            old = {"max_calls": s.max_calls, "max_explorers": s.max_explorers}
            return [("settings", "gateway", f, o, n) for f, o, n in differences(old, shown(e))]
        if isinstance(e, LimitsSaved):
            book = s.connection_limits if e.scope == "connection" else s.model_limits
            prior = shown(book[e.name]) if e.name in book else {}
            return [(f"{e.scope} limits", e.name, axis, prior.get(axis), getattr(e, axis))
                    for axis in LIMIT_AXES if prior.get(axis) != getattr(e, axis)]
        if isinstance(e, GatewayKeyCreated):
            return [("gateway key", e.name, "created", None, {"collections": e.collections, "rpm": e.rpm})]
        if isinstance(e, GatewayKeyRevoked):
            return [("gateway key", e.name, "revoked", None, None)]
        if isinstance(e, AlertRaised):
            before_alert = s.alerts.get(e.key)
            return [("alert", e.key, e.kind, before_alert.message if before_alert else None, e.message)]
        if isinstance(e, AlertCleared):
            up = s.alerts.get(e.key)
            return [("alert", e.key, "cleared", up.message if up else None, None)]
        if isinstance(e, ModelFactsSet):
            return self.facts_set(e)
        if isinstance(e, ConnectionsSaved) and e.allow_paid != s.allow_paid:
            return [("connections", "allow_paid", "allow_paid", list(s.allow_paid), list(e.allow_paid))]
        return []

    def facts_set(self, e: ModelFactsSet) -> list[tuple[str, str, str, Any, Any]]:
        """C-17: each fact the user set or cleared, with the override it had before."""
        layers = self.state.facts.get(e.alias)
        before = layers.user.model_dump(mode="json") if layers is not None else {}
        after = e.facts.model_dump(mode="json")
        out: list[tuple[str, str, str, Any, Any]] = [
            ("model facts", e.alias, name, before.get(name), None) for name in e.clear]
        out += [("model facts", e.alias, name, before.get(name), after[name]) for name in e.facts.known()]
        return out

    def model_update(self, e: ModelUpdated) -> list[tuple[str, str, str, Any, Any]]:
        model = self.state.models.get(e.alias)
        if model is None:
            return []
        out: list[tuple[str, str, str, Any, Any]] = []
        if e.role is not None and e.role != model.role:
            out.append(("model", e.alias, "role", model.role, e.role))
        if e.ad_hoc is not None and e.ad_hoc != model.ad_hoc:
            out.append(("model", e.alias, "ad_hoc", model.ad_hoc, e.ad_hoc))
        if e.options is not None and e.options.max_tokens != model.max_tokens:
            out.append(("model", e.alias, "max_tokens", model.max_tokens, e.options.max_tokens))
        if e.new_alias and e.new_alias != e.alias:
            out.append(("model", e.alias, "alias", e.alias, e.new_alias))
        return out

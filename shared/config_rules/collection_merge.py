"""C-10 saves merge: the fields a save does not send keep their values, and `add`/`remove` edit the member
list in place. Pure: the merged body then goes through the plain save rule."""

from __future__ import annotations

from typing import Any

from shared.config_rules.base import Invalid, Rule, save_collection, strip_bench
from shared.config_state import ConfigState
from shared.events import ConfigEvent

KEPT = ("members", "description", "shape", "tags", "reply", "merger", "shadows")


def merged(body: dict[str, Any], state: ConfigState) -> dict[str, Any]:
    name = strip_bench(body.get("name"))
    current = state.collections.get(name) if isinstance(name, str) else None
    out: dict[str, Any] = {"name": body.get("name")}
    if current is not None:
        out.update({k: getattr(current, k) for k in KEPT})
    out.update({k: v for k, v in body.items() if k in KEPT and v is not None})
    members = list(out.get("members") or [])
    members += [m for m in body.get("add") or [] if m not in members]
    gone = set(body.get("remove") or [])
    out["members"] = [m for m in members if m not in gone]
    return out


def save_merged(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        name = strip_bench(body.get("name"))
        errors = []
        absent = [m for m in body.get("remove") or [] if name in state.collections
                  and m not in state.collections[name].members]
        if absent:
            errors.append(f"not members of {name}: {', '.join(absent)}")
        try:
            event = save_collection(merged(body, state))(state, event_id)
        except Invalid as invalid:
            raise Invalid([*errors, *invalid.errors]) from None
        if errors:
            raise Invalid(errors)
        return event

    return rule

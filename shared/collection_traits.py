"""What a collection's members have together (H-G1): the smallest known window and the capabilities every
member has. The model listings and the admin views both show it. Pure: a function of the config fold."""

from __future__ import annotations

from typing import Any

from shared.config_state import ConfigState
from shared.events import CollectionSaved, ModelRegistered

CAPABILITIES = ("tools", "vision", "structured_output", "reasoning")


def together(col: CollectionSaved, state: ConfigState) -> dict[str, Any]:
    """What the members have together: the smallest known window, the capabilities ALL of them have
    (registered, or learned by a probe, HL-3)."""
    models: list[ModelRegistered] = [state.models[m] for m in col.members if m in state.models]
    windows = [m.context_window for m in models if m.context_window]
    known = {m.alias for m in models if m.context_window}

    def has(model: ModelRegistered, cap: str) -> bool:
        return getattr(model, cap, None) is True or cap in state.learned.get(model.alias, set())

    capabilities = [
        cap for cap in CAPABILITIES
        if models and len(models) == len(col.members) and all(has(m, cap) for m in models)
    ]
    return {
        "context_window": min(windows) if windows else None,
        "context_unknown": [m for m in col.members if m not in known],
        "capabilities": capabilities,
        "connections": sorted({state.connection_of(m) for m in col.members}),
        "limits": {},
    }

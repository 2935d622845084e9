"""`GET /v1/models` (H-G1): every collection three times, once per reply mode, with what its members
have in common. Pure: a function of the configuration fold."""

from __future__ import annotations

from typing import Any

from services.gateway.ask import REPLY_MODES
from shared.alerts import retiring
from shared.collection_traits import together
from shared.config_state import ConfigState


def model_rows(state: ConfigState) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in sorted(state.collections):
        col = state.collections[name]
        shared = {
            "object": "model",
            "created": 0,
            "owned_by": "benchwarmers",
            "description": col.description,
            "tags": list(col.tags),
            "members": list(col.members),
            "shape": col.shape,
            "explorers": state.explorer_count(len(col.members)),
            "merger": col.merger,
            "together": together(col, state),
            # HL-5: members on a `retiring` alert (they retire unless they answer; explorers avoid them).
            "retiring": [m.alias for m in (state.models.get(a) for a in col.members)
                         if m is not None and retiring(state.alerts, m.served) is not None],
        }
        modes = [col.reply, *(m for m in REPLY_MODES if m != col.reply)]
        for mode in modes:
            row_id = f"bench/{name}" if mode == col.reply else f"bench/{name}:{mode}"
            rows.append({"id": row_id, **shared, "reply": mode})
    return rows

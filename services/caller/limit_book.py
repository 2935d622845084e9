"""Which limits bind a call (SPEC L-1): the user's per connection and per model (folded config), and the
limits learned from providers' errors (folded `LimitLearned` events), only ever tighter. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from services.caller.pacing import Limit
from shared.config_state import ConfigState
from shared.events import EventBase, LimitLearned

CONNECTION_AXES = ("rpm", "rpd", "tpm", "tpd", "rpmo")
MODEL_AXES = ("rpm", "rpd", "tpm", "tpd")
USER = "your limit"


@dataclass(frozen=True)
class Learned:
    limit: int
    at: datetime


class LimitBook:
    def __init__(self, config: ConfigState) -> None:
        self.config = config
        self.learned: dict[tuple[str, str], Learned] = {}  # (alias, axis) → the lowest stated

    def fold(self, event: EventBase, seq: int = 0) -> None:
        if isinstance(event, LimitLearned):
            if event.axis == "context":
                self.config.learn_window(event.alias, event.limit, event.at)
            known = self.learned.get((event.alias, event.axis))
            if known is None or event.limit < known.limit:
                self.learned[(event.alias, event.axis)] = Learned(event.limit, event.at)

    def limits_for(self, connection: str, alias: str) -> list[Limit]:
        found = []
        user_connection = self.config.connection_limits.get(connection)
        for axis in CONNECTION_AXES:
            n = getattr(user_connection, axis, None)
            if n:
                found.append(Limit("connection", connection, axis, n, USER))
        user_model = self.config.model_limits.get(alias)
        for axis in MODEL_AXES:
            n = getattr(user_model, axis, None)
            learned = self.learned.get((alias, axis))
            if n:
                found.append(Limit("model", alias, axis, n, USER))
            elif learned is not None:  # (c): only where the user set nothing for this axis
                found.append(Limit("model", alias, axis, learned.limit, f"learned {learned.at:%Y-%m-%d}"))
        return found

    def is_tighter(self, connection: str, alias: str, axis: str, n: int) -> bool:
        """L-3: a stated limit is kept only when lower than the connection's, the model's registered
        context window, and what was learned before."""
        known = [getattr(self.config.connection_limits.get(connection), axis, None)]
        model = self.config.models.get(alias)
        if axis == "context" and model is not None:
            known.append(model.context_window)
        learned = self.learned.get((alias, axis))
        known.append(learned.limit if learned else None)
        return all(n < k for k in known if k)

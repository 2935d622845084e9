"""When `bench up` starts a dead child again: at once the first time, then after a pause that doubles while
it keeps dying soon after each start (a taken port, a bad setting, NATS away), so a crash loop neither
spins a core nor floods the log. A child that stayed up a while counts as healthy again. Pure: the caller
passes the clock."""

from __future__ import annotations

from dataclasses import dataclass

FIRST_PAUSE_S = 0.5
LONGEST_PAUSE_S = 30.0
STEADY_S = 30.0


@dataclass
class Restarts:
    started_at: float = 0.0
    quick_deaths: int = 0
    due_at: float | None = None  # set while the child is dead and waits for its next start

    def started(self, now: float) -> None:
        self.started_at = now
        self.due_at = None

    def died(self, now: float) -> float:
        """Note a death seen at `now`; returns how long to wait before starting it again."""
        if now - self.started_at >= STEADY_S:
            self.quick_deaths = 0
        quick = self.quick_deaths
        pause = min(LONGEST_PAUSE_S, FIRST_PAUSE_S * 2 ** (quick - 1)) if quick else 0.0
        self.quick_deaths += 1
        self.due_at = now + pause
        return pause

    def waiting(self) -> bool:
        return self.due_at is not None

    def due(self, now: float) -> bool:
        return self.due_at is not None and now >= self.due_at

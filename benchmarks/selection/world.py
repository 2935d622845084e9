"""The simulated bench: models whose worth the seater never sees, providers that drift, a judge that errs.

Everything random comes from one `random.Random` per run, so a seed replays a run exactly. Only the truth
lives here; the choices are made by the seater's own code, fed the events the real services would publish.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 1, 1, tzinfo=UTC)
COOLDOWN = timedelta(seconds=60)  # a 429 rests the model this long (L-3's learning, simplified)
RATE_LIMITED = 0.5  # share of failures that are rate limits (the rest: 5xx, resets, silence)


@dataclass
class SimModel:
    """A model's hidden truth: the chance an answer is useful, per shape; its failure rate and median
    latency, which wander a little every step."""

    alias: str
    useful: dict[str, float]
    fail: float
    latency_s: float

    def drift(self, rng: random.Random) -> None:
        self.fail = min(0.6, max(0.0, self.fail + rng.gauss(0.0, 0.004)))
        self.latency_s = min(300.0, max(1.0, self.latency_s * math.exp(rng.gauss(0.0, 0.02))))

    def attempt(self, rng: random.Random, deadline_s: float) -> str:
        """`ok`, `limited` (a 429) or `error` (any other failure, or no answer within the deadline)."""
        if rng.random() < self.fail:
            return "limited" if rng.random() < RATE_LIMITED else "error"
        if self.latency_s * math.exp(rng.gauss(0.0, 0.8)) > deadline_s:
            return "error"
        return "ok"


@dataclass(frozen=True)
class Judge:
    """Judges a share of answers; each verdict is wrong with chance `noise`."""

    rate: float = 0.5
    noise: float = 0.1

    def verdict(self, rng: random.Random, useful: bool) -> bool | None:
        if rng.random() >= self.rate:
            return None
        return useful if rng.random() >= self.noise else not useful


@dataclass
class Clock:
    """Simulated time: every new conversation or panel is `step` later than the one before."""

    step: timedelta = timedelta(seconds=20)
    now: datetime = field(default=T0)

    def tick(self) -> datetime:
        self.now += self.step
        return self.now


def models(rng: random.Random, count: int, shapes: tuple[str, ...], prefix: str = "m") -> list[SimModel]:
    """`count` models with usefulness spread over [0.2, 0.85] per shape, mostly healthy providers."""
    return [
        SimModel(
            alias=f"{prefix}{i}", useful={s: rng.uniform(0.2, 0.85) for s in shapes},
            fail=rng.uniform(0.0, 0.12), latency_s=rng.uniform(2.0, 25.0),
        )
        for i in range(1, count + 1)
    ]

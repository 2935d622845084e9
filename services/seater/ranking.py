"""Orders decided by verdicts: who merges a panel (SPEC P-15), who answers first in route mode (RM-3)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from math import sqrt
from statistics import NormalDist

from services.seater.rotation import Rotation
from shared.config_state import ConfigState
from shared.events import CollectionSaved

# RM-3: how often the stalest fresh member is tried first, so a member nobody judged still gets turns.
EXPLORE_FIRST_CHANCE = 0.25
# The sampling rule explores by its own doubt; this small floor keeps every fresh member some first turns.
SAMPLING_EXPLORE_CHANCE = 0.05

# A route ranking: (eligible members, rotation, now, a draw in [0, 1)) → the members, first to try first.
RouteRanking = Callable[[list[str], Rotation, datetime, Callable[[], float]], list[str]]


def merger_candidates(col: CollectionSaved, shape: str, config: ConfigState, rotation: Rotation) -> list[str]:
    """The collection's merger alone if set and on the bench; else members with useful verdicts on this shape
    (useful count, then useful ratio, descending), then the other members in their order."""
    if col.merger and col.merger in config.models:
        return [col.merger]
    members = [a for a in dict.fromkeys(col.members) if a in config.models]
    proven = [a for a in members if rotation.useful(a, shape).useful > 0]
    proven.sort(key=lambda a: (-rotation.useful(a, shape).useful, -rotation.useful(a, shape).ratio))
    return proven + [a for a in members if a not in proven]


def route_order(
    members: list[str], rotation: Rotation, now: datetime, draw: Callable[[], float]
) -> list[str]:
    """Useful verdicts overall, descending (ties keep member order), resting members last. With chance
    `EXPLORE_FIRST_CHANCE` (`draw()` in [0, 1)), and more than one fresh member, the fresh member with the
    oldest last seat (never seated = oldest) goes first instead."""
    ranked = sorted(members, key=lambda a: (rotation.cooling(a, now), -rotation.useful(a).useful))
    return _stalest_first(ranked, rotation, now, draw, EXPLORE_FIRST_CHANCE)


def sampled_order(
    members: list[str], rotation: Rotation, now: datetime, draw: Callable[[], float],
    explore: float = SAMPLING_EXPLORE_CHANCE,
) -> list[str]:
    """Thompson sampling over recent verdicts (`Rotation.recently_useful`): each member's chance of a useful
    answer is drawn from its Beta(1 + useful, 1 + not useful) belief (one draw each, in member order) and
    the highest draw goes first; resting members last. Until some member has a verdict the members keep
    their own order. Then, with chance `explore`, the stalest fresh member goes first, as in RM-3."""
    evidence = {a: rotation.recently_useful(a) for a in members}
    if any(judged for _, judged in evidence.values()):
        drawn = {a: _belief_draw(*evidence[a], draw()) for a in members}
    else:
        drawn = dict.fromkeys(members, 0.0)
    ranked = sorted(members, key=lambda a: (rotation.cooling(a, now), -drawn[a]))
    return _stalest_first(ranked, rotation, now, draw, explore)


def _belief_draw(useful: float, judged: float, u: float) -> float:
    """A draw from Beta(1 + useful, 1 + judged - useful) by its normal approximation (same mean and
    spread), so one uniform `u` is enough and a test can inject it."""
    a, b = 1.0 + useful, 1.0 + max(0.0, judged - useful)
    spread = sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    return a / (a + b) + spread * NormalDist().inv_cdf(min(max(u, 1e-9), 1.0 - 1e-9))


def _stalest_first(
    ranked: list[str], rotation: Rotation, now: datetime, draw: Callable[[], float], chance: float
) -> list[str]:
    fresh = [a for a in ranked if not rotation.cooling(a, now)]
    if len(fresh) > 1 and draw() < chance:
        stalest = min(fresh, key=rotation.last_seat)
        ranked.remove(stalest)
        ranked.insert(0, stalest)
    return ranked


# BENCH_ROUTE_RANKING picks one (SeaterSettings.route_ranking).
ROUTE_RANKINGS: dict[str, RouteRanking] = {"verdicts": route_order, "sampling": sampled_order}

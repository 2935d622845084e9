"""Orders decided by verdicts and suite scores: who merges a panel (SPEC P-15), who answers first in route
mode (RM-3). Suite scores come from `Rotation.suite` (T-5)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from math import sqrt
from statistics import NormalDist

from services.seater.rotation import Rotation
from shared.commands import RankLine, RankReply
from shared.config_state import ConfigState
from shared.events import CollectionSaved

# RM-3: how often the stalest fresh member is tried first, so a member nobody judged still gets turns.
EXPLORE_FIRST_CHANCE = 0.25
# The sampling rule explores by its own doubt; this small floor keeps every fresh member some first turns.
SAMPLING_EXPLORE_CHANCE = 0.05
# The leader rule (docs/selection.md): how often a challenger drawn by Thompson sampling goes first instead
# of the leader, and how often the stalest fresh member does (the floor under every member's playing time).
LEADER_CHALLENGE_CHANCE = 0.05
LEADER_EXPLORE_CHANCE = 0.03

# A route ranking: (eligible members, rotation, now, a draw in [0, 1)) → the members, first to try first.
RouteRanking = Callable[[list[str], Rotation, datetime, Callable[[], float]], list[str]]


def merger_candidates(col: CollectionSaved, shape: str, config: ConfigState, rotation: Rotation) -> list[str]:
    """The collection's merger alone if set and on the bench; else members with useful verdicts on this shape
    (useful count, then useful ratio, descending), then the router's primary for the shape (the best suite
    recall among the models that may be chosen automatically, member or not), then the other members in
    their order."""
    if col.merger and col.merger in config.models:
        return [col.merger]
    members = [a for a in dict.fromkeys(col.members) if a in config.models]
    proven = [a for a in members if rotation.useful(a, shape).useful > 0]
    proven.sort(key=lambda a: (-rotation.useful(a, shape).useful, -rotation.useful(a, shape).ratio))
    primary = rotation.suite.primary([a for a, m in config.models.items() if not m.ad_hoc], shape)
    first = proven + ([primary] if primary is not None and primary not in proven else [])
    return first + [a for a in members if a not in first]


def route_order(
    members: list[str], rotation: Rotation, now: datetime, draw: Callable[[], float]
) -> list[str]:
    """Useful verdicts overall, then verified suite findings (T-5), descending (ties keep member order),
    resting members last. With chance `EXPLORE_FIRST_CHANCE` (`draw()` in [0, 1)), and more than one fresh
    member, the fresh member with the oldest last seat (never seated = oldest) goes first instead."""
    ranked = sorted(members, key=lambda a: (rotation.cooling(a, now), -rotation.useful(a).useful,
                                            -rotation.suite.findings(a)))
    return _stalest_first(ranked, rotation, now, draw, EXPLORE_FIRST_CHANCE)


def sampled_order(
    members: list[str], rotation: Rotation, now: datetime, draw: Callable[[], float],
    explore: float = SAMPLING_EXPLORE_CHANCE,
) -> list[str]:
    """Thompson sampling over recent verdicts (`Rotation.recently_useful`): each member's chance of a useful
    answer is drawn from its Beta(1 + useful, 1 + not useful) belief (one draw each, in member order) and
    the highest draw goes first; resting members last. Equal draws (until some member has a verdict, every
    draw is equal) go to more verified suite findings first (T-5), then member order. Then, with chance
    `explore`, the stalest fresh member goes first, as in RM-3."""
    evidence = {a: rotation.recently_useful(a) for a in members}
    if any(judged for _, judged in evidence.values()):
        drawn = {a: _belief_draw(*evidence[a], draw()) for a in members}
    else:
        drawn = dict.fromkeys(members, 0.0)
    ranked = sorted(members, key=lambda a: (rotation.cooling(a, now), -drawn[a], -rotation.suite.findings(a)))
    return _stalest_first(ranked, rotation, now, draw, explore)


def led_order(
    members: list[str], rotation: Rotation, now: datetime, draw: Callable[[], float],
    challenge: float = LEADER_CHALLENGE_CHANCE, explore: float = LEADER_EXPLORE_CHANCE,
) -> list[str]:
    """The leader first: the member whose recent verdicts (`Rotation.recently_useful`) give the highest
    expected chance of a useful answer, its Beta(1 + useful, 1 + not useful) mean; the others after it the
    same way, resting members last, equal means by verified suite findings (T-5), then member order.

    Sampling's every start is a gamble in proportion to its doubt; here the leader starts nearly every
    conversation and doubt is paid for in a fixed share. With chance `challenge` (`draw()` in [0, 1)) the
    challenger goes first: the fresh member, leader aside, with the highest draw from its belief (one draw
    each, in member order), so challenges go to members the evidence has not ruled out. Then, with chance
    `explore`, the stalest fresh member goes first, as in RM-3. Until some member has a verdict nobody
    challenges."""
    evidence = {a: rotation.recently_useful(a) for a in members}
    key = {a: (rotation.cooling(a, now), -_belief_draw(*evidence[a], 0.5), -rotation.suite.findings(a))
           for a in members}
    ranked = sorted(members, key=key.__getitem__)
    fresh = [a for a in ranked if not key[a][0]]
    if len(fresh) > 1 and any(judged for _, judged in evidence.values()) and draw() < challenge:
        drawn = {a: _belief_draw(*evidence[a], draw()) for a in fresh[1:]}
        rival = max(fresh[1:], key=drawn.__getitem__)
        ranked.remove(rival)
        ranked.insert(0, rival)
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


def never_first() -> float:
    """A draw that never moves the stalest member first (0.5 is above every explore chance) and takes each
    sampled belief at its mean (the normal's median): the order the evidence alone gives."""
    return 0.5


def explain(
    col: CollectionSaved, config: ConfigState, rotation: Rotation, now: datetime,
    ranking: RouteRanking = route_order,
) -> RankReply:
    """Route mode's order for a new conversation by the seater's ranking rule, without the explore-first
    draw (and, for sampling, each belief at its mean), each member with the evidence that placed it, and
    the merger candidates for the collection's shape."""
    members = [a for a in dict.fromkeys(col.members) if a in config.models]
    lines = []
    for place, alias in enumerate(ranking(members, rotation, now, never_first), 1):
        tally, recall = rotation.useful(alias), rotation.suite.recall(alias)
        resting = rotation.cooling(alias, now)
        wrong = rotation.suite.confidently_wrong(alias)
        why = [f"{tally.useful} useful of {tally.judged} judged"]
        why.append(f"{recall.found} suite findings of {recall.of} (over {recall.answers} tasks)"
                   if recall.answers else "no suite score")
        if wrong:
            why.append(f"{wrong} confidently wrong")
        if resting:
            why.append(f"resting until {rotation.cooling_until[alias]:%Y-%m-%d %H:%M} UTC: last")
        lines.append(RankLine(
            alias=alias, place=place, useful=tally.useful, judged=tally.judged, findings=recall.found,
            recall=round(recall.ratio, 3) if recall.of else None, suite_answers=recall.answers,
            confidently_wrong=wrong, resting=resting, why="; ".join(why),
        ))
    shape = col.shape or "general"
    primary = rotation.suite.primary([a for a, m in config.models.items() if not m.ad_hoc], shape)
    mergers = merger_candidates(col, shape, config, rotation)
    return RankReply(collection=col.name, route=lines, mergers=mergers, primary=primary)


# BENCH_ROUTE_RANKING picks one (SeaterSettings.route_ranking).
ROUTE_RANKINGS: dict[str, RouteRanking] = {
    "verdicts": route_order, "sampling": sampled_order, "leader": led_order,
}

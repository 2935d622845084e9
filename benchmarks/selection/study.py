"""The study: every rule on the same seeds, medians over seeds, the tables and plots of docs/selection.md."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import partial
from itertools import repeat
from pathlib import Path
from statistics import NormalDist
from typing import Any

from benchmarks.selection.panels import EXPLORER_RULES, Explorers, PanelRun, PanelSetup, run_panels
from benchmarks.selection.picking import PICKERS, Picker, PickRun, PickSetup, run_picking
from benchmarks.selection.plot import Series, line_chart
from benchmarks.selection.route import CHANGES, RULES, Change, RouteRun, RouteSetup, Rule, run_route
from services.seater.ranking import LEADER_EXPLORE_CHANCE, led_order, sampled_order

CLEAR_GAP = 0.1  # a best member at least this much more useful than the next is "clearly best"
TARGET_SHARE, TARGET_FOLLOW, TARGET_FLOOR = 0.9, 100, 2.0  # issue 22: ≥90% at 200, ≤100 verdicts, 1 per 50
START, END = "<!-- figures:start -->", "<!-- figures:end -->"

# The rules compared: RM-3 as written, the sampling rule, the leader rule as shipped, and variants (other
# evidence half-lives, none: every verdict counts forever; twice the challenges) that show what fading and
# exploring buy and cost.
SHIPPED = RULES["leader"]
STUDIED = (
    RULES["verdicts"], RULES["sampling"], SHIPPED,
    Rule("sampling, no fading", sampled_order, math.inf),
    Rule("leader, challenges 10%", partial(led_order, challenge=0.1, explore=LEADER_EXPLORE_CHANCE)),
    Rule("leader, no fading", led_order, math.inf),
)
PLOTTED = ("verdicts", "sampling", "leader", "leader, no fading")

RouteRuns = dict[str, list[dict[Change, RouteRun]]]


@dataclass(frozen=True)
class Study:
    route: RouteRuns
    panels: dict[tuple[Explorers, Change], list[PanelRun]]
    picking: dict[Picker, list[PickRun]]
    seeds: int
    first: int = 0


def run_study(
    seeds: int, route: RouteSetup | None = None, panels: PanelSetup | None = None, jobs: int = 1,
    first: int = 0,
) -> Study:
    """Every run on seeds `first`.. `first + seeds - 1`, in `jobs` processes; each run depends on its seed
    alone, so `jobs` changes no figure."""
    numbers = range(first, first + seeds)
    route, panels = route or RouteSetup(), panels or PanelSetup()
    panel_setups = {(rule, how): replace(panels, explorers=rule, change=how)
                    for rule in EXPLORER_RULES for how in CHANGES}
    with ProcessPoolExecutor(jobs) if jobs > 1 else nullcontext() as pool:
        run: Callable[..., Iterator[Any]] = pool.map if pool is not None else map
        route_runs = {rule.name: list(run(run_route, numbers, repeat(rule), repeat(route)))
                      for rule in STUDIED}
        panel_runs = {key: list(run(run_panels, numbers, repeat(setup)))
                      for key, setup in panel_setups.items()}
        pick_runs = {picker: list(run(run_picking, numbers, repeat(PickSetup(picker=picker))))
                     for picker in PICKERS}
    return Study(route=route_runs, panels=panel_runs, picking=pick_runs, seeds=seeds, first=first)


def median(values: Iterable[float]) -> float:
    found = list(values)
    return statistics.median(found) if found else math.nan


def follow_median(runs: list[RouteRun]) -> float:
    """Median verdicts to follow a change; a run that never followed counts as infinitely slow."""
    return median(math.inf if r.follow is None else r.follow for r in runs)


def within(follow: int | None) -> bool:
    return follow is not None and follow <= TARGET_FOLLOW


def verdicts_text(value: float, horizon: int) -> str:
    return f"> {horizon}" if math.isinf(value) else f"{value:g}"


def told_apart(top_two: tuple[float, float], verdicts: int, noise: float) -> float:
    """The chance that `verdicts` verdicts, half on each of the two best members (as if a rule knew which two
    they were and spent nothing on the others), rank the better one first: the normal approximation of the
    difference of their judged useful shares, each verdict wrong with chance `noise`."""
    seen = [noise + (1.0 - 2.0 * noise) * p for p in top_two]
    spread = math.sqrt(sum(q * (1.0 - q) for q in seen) / (verdicts / 2))
    return NormalDist().cdf((seen[0] - seen[1]) / spread) if spread else 1.0


def bound_line(study: Study, setup: RouteSetup) -> str:
    """What any rule could reach at each checkpoint, from the truth of the seeds."""
    noise = setup.judge.noise
    before = [r["worse"] for r in next(iter(study.route.values()))]  # the truth is the same for every rule
    shares = ", ".join(
        f"{statistics.mean(told_apart(r.top_two[n], n, noise) for r in before):.0%} after {n}"
        for n in setup.checkpoints
    )
    return ("Bound: even a rule that knew the two best members in advance and spent every verdict on them "
            f"alone would find the better one ahead (pooled over seeds) in {shares} verdicts.")


def route_table(study: Study, setup: RouteSetup) -> str:
    checks = setup.checkpoints
    after = "/".join(map(str, checks))
    clear_head = f"clear best (gap ≥ {CLEAR_GAP}) after {after}"
    head = ["rule", *(f"best first after {n}" for n in checks), f"pooled after {after}", clear_head,
            f"evidence's leader is the best after {after}",
            f"regret to {setup.change_at}", "least-played firsts /100",
            "follow: favourite turns bad", "follow: least played turns best"]
    rows = []
    for name, runs in study.route.items():
        before = [r["worse"] for r in runs]  # before the change both forks are one run
        shares = [f"{median(r.best_first[n] for r in before):.0%}" for n in checks]
        clear = "/".join(
            f"{median(r.best_first[n] for r in before if r.gap[n] >= CLEAR_GAP):.0%}" for n in checks
        )
        follows = [
            f"{verdicts_text(follow_median([r[how] for r in runs]), setup.horizon)} "
            f"({sum(1 for r in runs if within(r[how].follow))}/{len(runs)} ≤ {TARGET_FOLLOW})"
            for how in CHANGES
        ]
        pooled = "/".join(f"{statistics.mean(r.best_first[n] for r in before):.0%}" for n in checks)
        right = "/".join(f"{statistics.mean(r.evidence_right[n] for r in before):.0%}" for n in checks)
        rows.append([name, *shares, pooled, clear, right, f"{median(r.regret for r in before):.0f}",
                     f"{median(r.least_firsts_per_100() for r in before):.1f}", *follows])
    return markdown(head, rows)


def panel_table(study: Study) -> str:
    head = ["explorers", "change", "useful seats / panel", "of them explorers",
            "explorers' worth / the best possible", "least-seated healthy explorer /100 panels",
            "panels to a judged seat after the change"]
    rows = []
    for (rule, how), runs in study.panels.items():
        explorer = median(r.useful_explorer_seats / r.panels for r in runs)
        notice = median(math.inf if r.notice is None else r.notice for r in runs)
        worth = median(r.explorer_worth / r.best_explorer_worth for r in runs)
        rows.append([rule, f"a pool model turns {'bad' if how == 'worse' else 'best'}",
                     f"{median(r.useful_per_panel() for r in runs):.2f}", f"{explorer:.2f}", f"{worth:.0%}",
                     f"{median(r.least_seats_per_100() for r in runs):.1f}", verdicts_text(notice, 0)])
    return markdown(head, rows)


def picking_table(study: Study) -> str:
    head = ["shape picker", "useful explorer seats / panel",
            "specialist explorer seats on their shape / panel", "least-seated pool model /100 panels"]
    rows = [[picker, f"{median(r.per_panel(r.useful_explorer_seats) for r in runs):.2f}",
             f"{median(r.per_panel(r.specialist_seats) for r in runs):.2f}",
             f"{median(r.least_seats_per_100() for r in runs):.1f}"]
            for picker, runs in study.picking.items()]
    return markdown(head, rows)


def markdown(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def targets(study: Study, setup: RouteSetup) -> str:
    """The issue's targets, held or not, for each rule (medians over seeds)."""
    lines = []
    for name, runs in study.route.items():
        before = [r["worse"] for r in runs]
        share = median(r.best_first[setup.checkpoints[1]] for r in before)
        pooled = statistics.mean(r.best_first[setup.checkpoints[1]] for r in before)
        floor = median(r.least_firsts_per_100() for r in before)
        follows = [follow_median([r[how] for r in runs]) for how in CHANGES]
        held = [share >= TARGET_SHARE, floor >= TARGET_FLOOR, *(f <= TARGET_FOLLOW for f in follows)]
        marks = ["holds" if ok else "misses" for ok in held]
        lines.append(f"- **{name}**: ≥ 90% best first after {setup.checkpoints[1]} verdicts {marks[0]} "
                     f"({share:.0%} in the median seed, {pooled:.0%} pooled); ≥ 1 first seat per 50 "
                     f"conversations for every member {marks[1]} "
                     f"({floor:.1f} per 100); follows its favourite turning bad within {TARGET_FOLLOW} "
                     f"verdicts {marks[2]}; follows the least played turning best {marks[3]}.")
    return "\n".join(lines)


def curves(runs: list[dict[Change, RouteRun]], how: Change) -> list[tuple[float, float]]:
    """The median best-first share at each point of the run, over seeds."""
    points = sorted({n for r in runs for n, _ in r[how].curve})
    by_seed = [dict(r[how].curve) for r in runs]
    return [(n, median(c[n] for c in by_seed if n in c)) for n in points]


def plots(study: Study, setup: RouteSetup) -> dict[str, str]:
    out = {}
    for how in CHANGES:
        series: Series = {name: curves(runs, how) for name, runs in study.route.items() if name in PLOTTED}
        turned = "favourite turns bad" if how == "worse" else "least played turns best"
        out[f"route-{how}.svg"] = line_chart(
            f"Route: best member first ({turned} at {setup.change_at} verdicts)",
            series, "verdicts", "share (median over seeds)", marks=(setup.change_at,),
        )
    return out


def report(study: Study, setup: RouteSetup, command: str) -> str:
    return "\n\n".join([
        f"Regenerated by `{command}` ({study.seeds} seeds, {study.first}–{study.first + study.seeds - 1}; "
        "medians over seeds).",
        "### Route mode\n\n" + route_table(study, setup),
        bound_line(study, setup),
        "Targets (issue 22):\n\n" + targets(study, setup),
        "![route, the favourite turns bad](selection/route-worse.svg)\n\n"
        "![route, the least played turns best](selection/route-better.svg)",
        "### Panels (explorers by staleness as P-7 says, or one chair by sampling)\n\n" + panel_table(study),
        "### The shape picker (a shapeless collection; requests general, code or quick)\n\n"
        + picking_table(study),
    ])


def write(doc: Path, figures: str, svgs: dict[str, str], log: Callable[[str], None] = print) -> None:
    """Put the figures between the doc's markers, and the plots in the folder beside it."""
    text = doc.read_text()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(f"{head}{START}\n{figures}\n{END}{tail}")
    folder = doc.with_suffix("")
    folder.mkdir(exist_ok=True)
    for name, svg in svgs.items():
        (folder / name).write_text(svg)
    log(f"wrote {doc} and {len(svgs)} plots in {folder}/")

"""The selection simulator (issue 22) at a small size: a seed replays a run exactly, and every measure moves
when the choices really differ (a rule that knows the truth against one that picks the worst)."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from benchmarks.selection.__main__ import DOC
from benchmarks.selection.panels import Explorers, PanelSetup, PanelSim, run_panels
from benchmarks.selection.picking import PickSetup, run_picking
from benchmarks.selection.route import CHECK_EVERY, RULES, Change, RouteSetup, RouteSim, Rule, run_route
from benchmarks.selection.study import END, START, report, run_study, told_apart, write
from benchmarks.selection.world import Judge
from services.seater.rotation import Rotation

SMALL = RouteSetup(members=4, judge=Judge(rate=1.0, noise=0.0), checkpoints=(25, 50, 100), change_at=100,
                   horizon=60)


def knowing(best_first: bool) -> tuple[Rule, Callable[[RouteSim], None]]:
    """A rule that ranks by the hidden truth (best first, or worst first), and how to show it the sim."""
    seen: list[RouteSim] = []

    def ranking(members: list[str], rotation: Rotation, now: datetime, _: Callable[[], float]) -> list[str]:
        sim = seen[0]
        sign = -1 if best_first else 1
        return sorted(members, key=lambda a: (rotation.cooling(a, now), sign * sim.worth(a)))

    return Rule("oracle" if best_first else "contrarian", ranking), seen.append


def knowing_run(best_first: bool) -> RouteSim:
    rule, show = knowing(best_first)
    sim = RouteSim(7, rule, SMALL)
    show(sim)
    sim.simulate(SMALL.change_at)
    return sim


def test_a_seed_replays_a_route_run_exactly() -> None:
    first, again = run_route(3, RULES["sampling"], SMALL), run_route(3, RULES["sampling"], SMALL)
    assert first == again
    assert run_route(4, RULES["sampling"], SMALL) != first


def test_route_measures_tell_a_rule_that_knows_from_one_that_errs() -> None:
    oracle, contrarian = knowing_run(True).run, knowing_run(False).run
    assert all(oracle.best_first[n] == 1.0 for n in SMALL.checkpoints)
    assert all(contrarian.best_first[n] < 0.5 for n in SMALL.checkpoints)
    assert oracle.regret == 0.0 < contrarian.regret
    # The contrarian never plays the best, so its evidence never singles the best out; the oracle's does.
    assert max(contrarian.evidence_right.values()) == 0.0 < max(oracle.evidence_right.values())
    assert oracle.least_firsts_per_100() < 100 / SMALL.members  # the oracle never explores


def followed(how: Change, frozen: bool) -> int | None:
    """Verdicts until a truth-ranking rule follows the change; `frozen` ranks by the truth before it."""
    worth: dict[str, Callable[[], float]] = {}

    def ranking(members: list[str], rotation: Rotation, now: datetime, _: Callable[[], float]) -> list[str]:
        return sorted(members, key=lambda a: (rotation.cooling(a, now), -worth[a]()))

    sim = RouteSim(7, Rule("truth", ranking), SMALL)
    before = {a: sim.worth(a) for a in sim.aliases}
    for alias in sim.aliases:
        worth[alias] = (lambda a=alias: before[a]) if frozen else (lambda a=alias: sim.worth(a))
    sim.simulate(SMALL.change_at)
    sim.change(how)
    return sim.simulate(SMALL.change_at + SMALL.horizon).follow


def test_the_follow_measure_sees_a_ranking_that_follows_and_one_that_does_not() -> None:
    assert followed("worse", frozen=False) == followed("better", frozen=False) == CHECK_EVERY
    assert followed("worse", frozen=True) is None and followed("better", frozen=True) is None


def test_panel_runs_replay_and_every_pool_model_gets_explorer_seats() -> None:
    setup = PanelSetup(panels=80, change_at=40, judge=Judge(rate=1.0))
    first = run_panels(5, setup)
    assert first == run_panels(5, setup)
    assert first.least_seats_per_100() > 0 and first.notice is not None and first.notice <= 40


def test_panel_measures_count_the_truth_and_the_judge() -> None:
    def useful_per_panel(worth: float, judge: Judge) -> tuple[float, int | None]:
        sim = PanelSim(5, PanelSetup(panels=60, change_at=30, judge=judge))
        for model in sim.models.values():
            model.useful["code"], model.fail = worth, 0.0
        run = sim.simulate()
        return run.useful_per_panel(), run.notice

    # Five seats a panel (3 members, 2 explorers); after the change one pool model is useful 95% of the time.
    assert useful_per_panel(1.0, Judge(rate=1.0))[0] > 4.8
    assert useful_per_panel(0.0, Judge(rate=1.0))[0] < 0.5
    assert useful_per_panel(1.0, Judge(rate=1.0))[1] is not None
    assert useful_per_panel(1.0, Judge(rate=0.0))[1] is None  # nothing judged: nothing noticed


def test_the_study_writes_its_figures_between_the_markers(tmp_path: Path) -> None:
    panels = PanelSetup(panels=40, change_at=20)
    small = run_study(2, SMALL, panels)
    assert run_study(2, SMALL, panels, jobs=2) == small  # processes change no figure
    figures = report(small, SMALL, "python -m benchmarks.selection --write")
    assert "| verdicts |" in figures and "| sampling |" in figures and "useful seats / panel" in figures
    doc = tmp_path / "selection.md"
    doc.write_text(f"# Study\n\n{START}\nold\n{END}\n\nConclusion.\n")
    write(doc, figures, {"route-worse.svg": "<svg/>"}, log=lambda _: None)
    assert doc.read_text() == f"# Study\n\n{START}\n{figures}\n{END}\n\nConclusion.\n"
    assert (tmp_path / "selection" / "route-worse.svg").read_text() == "<svg/>"
    assert not math.isnan(small.route["verdicts"][0]["worse"].regret)
    assert START in DOC.read_text() and END in DOC.read_text()  # the real doc can be rewritten


def test_the_sampled_explorer_chair_goes_to_the_pool_model_that_proves_useful() -> None:
    def seats_of_the_useful_one(explorers: Explorers) -> tuple[int, float]:
        sim = PanelSim(5, PanelSetup(panels=200, change_at=1_000, judge=Judge(rate=1.0, noise=0.0),
                                     explorers=explorers))
        for model in sim.models.values():
            model.useful["code"], model.fail = 0.0, 0.0
        sim.pool[3].useful["code"] = 1.0
        run = sim.simulate()
        return run.explorer_seats[sim.pool[3].alias], run.least_seats_per_100()

    even, floor = seats_of_the_useful_one("staleness")
    favoured, sampled_floor = seats_of_the_useful_one("one sampled")
    assert even == 50 and floor == 25.0  # two chairs, eight pool models, by turns
    assert favoured > 150 and sampled_floor > 2.0  # the other chair still goes round


def test_the_bound_grows_with_verdicts_and_the_gap_and_shrinks_with_noise() -> None:
    assert told_apart((0.7, 0.6), 200, 0.1) < told_apart((0.7, 0.6), 1000, 0.1) < 1.0
    assert told_apart((0.7, 0.65), 200, 0.1) < told_apart((0.7, 0.6), 200, 0.1)
    assert told_apart((0.7, 0.6), 200, 0.3) < told_apart((0.7, 0.6), 200, 0.1)
    assert told_apart((0.7, 0.7), 200, 0.1) == 0.5


def test_the_shape_picker_lets_specialists_explore_their_own_shape() -> None:
    none, right = PickSetup(panels=90), PickSetup(panels=90, picker="always right")
    assert run_picking(2, right) == run_picking(2, right)
    without, picked = run_picking(2, none), run_picking(2, right)
    # Without a picker every request is `general`: only general models explore, no specialist ever does.
    assert without.specialist_seats == 0 and without.least_seats_per_100() == 0.0
    assert picked.per_panel(picked.specialist_seats) > 0.5 and picked.least_seats_per_100() > 2.0

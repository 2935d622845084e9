"""The benchmark's own arithmetic: percentiles, and the share of CPU time a hypervisor stole during a run."""

from __future__ import annotations

from benchmarks.panel import pct, python_speed, steal_share


def test_percentiles_pick_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert pct(values, 0.5) == 51.0 and pct(values, 0.95) == 95.0
    assert pct([], 0.5) != pct([], 0.5)  # NaN: nothing measured


def test_steal_is_a_share_of_the_busy_time() -> None:
    # /proc/stat: user nice system idle iowait irq softirq steal
    before = [100, 0, 10, 5000, 5, 0, 0, 20]
    after = [160, 0, 20, 9000, 5, 0, 0, 50]  # 60 user + 10 system + 30 steal busy, 4000 idle
    assert steal_share(before, after) == 30 / 100


def test_no_steal_figure_without_the_counters_or_without_work() -> None:
    assert steal_share(None, [1] * 8) is None
    assert steal_share([0] * 8, [0, 0, 0, 10, 0, 0, 0, 0]) is None  # only idle time passed


def test_the_machine_speed_is_the_median_of_its_repeats_in_milliseconds() -> None:
    speed = python_speed(repeats=3)
    assert 0 < speed < 60_000  # a number of milliseconds, not NaN (nothing measured) or seconds

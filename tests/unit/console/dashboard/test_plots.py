"""SVG plots from the data points: one mark per point, placed by its time and value."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.console.dashboard.plots import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, cumulative, number, plot

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_each_point_is_one_mark_placed_by_its_time_and_value() -> None:
    data = {"b": [(T0 + timedelta(seconds=10), 2.0), (T0, 4.0)], "a": [(T0 + timedelta(seconds=5), 1.0)]}
    drawn = plot("Latency", "s", data)
    assert drawn.count == 3 and [s.name for s in drawn.series] == ["a", "b"]
    b = drawn.series[1]
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    assert [(m.x, m.y) for m in b.marks] == [(LEFT, TOP), (LEFT + inner_w, TOP + inner_h / 2)]  # time order
    (a,) = drawn.series[0].marks
    assert (a.x, a.y) == (LEFT + inner_w / 2, TOP + inner_h * 3 / 4)
    assert a.label == "a 2026-01-01 12:00:05 UTC: 1 s"
    assert [t.label for t in drawn.y_ticks] == ["0", "2", "4"]


def test_no_point_is_an_empty_plot_and_one_instant_is_centred() -> None:
    assert plot("Calls", "calls", {}).empty
    (mark,) = plot("Calls", "calls", {"a": [(T0, 3.0)]}).series[0].marks
    assert mark.x == LEFT + (WIDTH - LEFT - RIGHT) / 2


def test_running_totals_step_once_per_call() -> None:
    later = T0 + timedelta(minutes=1)
    assert cumulative([(later, 5.0), (T0, 2.0)]) == [(T0, 2.0), (later, 7.0)]


def test_numbers_read_short() -> None:
    assert [number(v) for v in (0.0, 0.0123, 1.5, 120.4, 25_000)] == ["0", "0.012", "1.5", "120", "25k"]

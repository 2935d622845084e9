"""Plots drawn on the server as SVG from the ledger's own data points: one mark per point, placed by its
time and value, so what the page shows is what was recorded (no plotting library, nothing to vendor). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 28
# Colour-blind-safe (Okabe-Ito), each with 4.5:1 contrast or more on white.
COLOURS = ("#0072b2", "#b35900", "#007a5a", "#aa3377", "#5c5c00", "#005b96", "#8f4a00", "#555555")

Point = tuple[datetime, float]


@dataclass(frozen=True)
class Mark:
    x: float
    y: float
    label: str  # the point's own time and value, for its tooltip and for screen readers


@dataclass(frozen=True)
class Series:
    name: str
    colour: str
    marks: tuple[Mark, ...]

    @property
    def path(self) -> str:
        return " ".join(f"{m.x:.1f},{m.y:.1f}" for m in self.marks)


@dataclass(frozen=True)
class Tick:
    at: float
    label: str
    anchor: str = "end"  # SVG text-anchor: y labels end at the axis; the first time starts, the last ends


@dataclass(frozen=True)
class Plot:
    title: str
    unit: str
    series: tuple[Series, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def empty(self) -> bool:
        return not any(s.marks for s in self.series)

    @property
    def count(self) -> int:
        return sum(len(s.marks) for s in self.series)


def number(value: float) -> str:
    if abs(value) >= 10_000:
        return f"{value / 1000:,.0f}k"
    return f"{value:,.0f}" if value == int(value) or abs(value) >= 100 else f"{value:.2g}"


def plot(title: str, unit: str, data: Mapping[str, Sequence[Point]]) -> Plot:
    """Each series in time order; x spans the earliest to the latest point, y zero to the largest value."""
    points = [p for series in data.values() for p in series]
    if not points:
        return Plot(title, unit, (), (), ())
    start = min(t for t, _ in points).timestamp()
    end = max(t for t, _ in points).timestamp()
    span = (end - start) or 1.0
    top = max(v for _, v in points) or 1.0
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x_of(t: datetime) -> float:
        return LEFT + (t.timestamp() - start) / span * inner_w if end > start else LEFT + inner_w / 2

    def y_of(v: float) -> float:
        return TOP + inner_h - v / top * inner_h

    series = tuple(
        Series(name, COLOURS[i % len(COLOURS)], tuple(
            Mark(x_of(t), y_of(v), f"{name} {t:%Y-%m-%d %H:%M:%S} UTC: {number(v)} {unit}")
            for t, v in sorted(values)
        ))
        for i, (name, values) in enumerate(sorted(data.items()))
    )
    times = sorted({min(t for t, _ in points), max(t for t, _ in points)})
    x_ticks = tuple(Tick(x_of(t), f"{t:%m-%d %H:%M}", "start" if i == 0 and len(times) > 1 else "end")
                    for i, t in enumerate(times))
    y_ticks = tuple(Tick(y_of(v), number(v)) for v in (0.0, top / 2, top))
    return Plot(title, unit, series, x_ticks, y_ticks)


def cumulative(points: Sequence[Point]) -> list[Point]:
    """Running totals in time order: calls or tokens so far, one step per call."""
    total = 0.0
    out: list[Point] = []
    for t, v in sorted(points):
        total += v
        out.append((t, total))
    return out

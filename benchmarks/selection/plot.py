"""A line chart as SVG text: enough for the study's figures, without a plotting dependency."""

from __future__ import annotations

from html import escape

WIDTH, HEIGHT = 760, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 150, 36, 44
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")

Series = dict[str, list[tuple[float, float]]]


def line_chart(title: str, series: Series, x_label: str, y_label: str, marks: tuple[float, ...] = ()) -> str:
    """Each series a polyline on shared axes (y from 0 to 1); `marks` are dashed vertical lines."""
    xs = [x for points in series.values() for x, _ in points] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs)
    span = (x1 - x0) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def at(x: float, y: float) -> str:
        return f"{LEFT + (x - x0) / span * plot_w:.1f},{TOP + (1.0 - y) * plot_h:.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="20" font-size="14">{escape(title)}</text>',
        f'<text x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 8}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{TOP + plot_h / 2:.0f}" transform="rotate(-90 14 {TOP + plot_h / 2:.0f})" '
        f'text-anchor="middle">{escape(y_label)}</text>',
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 0.9, 1.0):
        y = TOP + (1.0 - tick) * plot_h
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for step in range(6):
        x = x0 + span * step / 5
        parts.append(f'<text x="{at(x, 0).split(",")[0]}" y="{TOP + plot_h + 16}" '
                     f'text-anchor="middle">{x:g}</text>')
    for mark in marks:
        top, bottom = at(mark, 1.0).split(","), at(mark, 0.0).split(",")
        parts.append(f'<line x1="{top[0]}" y1="{top[1]}" x2="{bottom[0]}" y2="{bottom[1]}" stroke="#888" '
                     'stroke-dasharray="4 4"/>')
    for i, (name, points) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        line = " ".join(at(x, y) for x, y in points)
        parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        y = TOP + 14 + 18 * i
        parts.append(f'<line x1="{WIDTH - RIGHT + 12}" y1="{y - 4}" x2="{WIDTH - RIGHT + 32}" y2="{y - 4}" '
                     f'stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{WIDTH - RIGHT + 38}" y="{y}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"

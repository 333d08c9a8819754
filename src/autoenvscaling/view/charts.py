"""Small charts as inline SVG, drawn on the server (no script, nothing fetched): grouped bars and lines."""

from __future__ import annotations

import math
from html import escape

PALETTE = ("#3b6fb6", "#e07b39", "#3a9a5b", "#b8466a", "#7a5cb0", "#8c8c8c")
W, H = 560, 250
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 30, 54


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exp = 10.0 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if value <= step * exp:
            return step * exp
    return 10.0 * exp


def _num(x: float) -> str:
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.3g}"


def _frame(title: str, ymax: float, kind: str) -> list[str]:
    parts = [
        f'<svg class="chart" data-kind="{kind}" viewBox="0 0 {W} {H}" role="img" aria-label="{escape(title)}"'
        ' xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{LEFT}" y="18" class="chart-title">{escape(title)}</text>',
    ]
    plot_h = H - TOP - BOTTOM
    for i in range(5):
        v = ymax * i / 4
        y = TOP + plot_h - plot_h * i / 4
        parts.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">{_num(v)}</text>')
    return parts


def _legend(names: list[str]) -> list[str]:
    """Below the plot, left to right."""
    parts, x, y = [], LEFT, H - 14
    for i, name in enumerate(names):
        color = PALETTE[i % len(PALETTE)]
        parts.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{x + 14}" y="{y + 9}" class="legend">{escape(name)}</text>')
        x += 24 + 7 * len(name)
    return parts


def _xlabel(x: float, i: int, text: str, width: float) -> str:
    """A category label; when labels would overlap, every other one drops a line and long ones are cut."""
    fits = len(text) * 6.5 <= width
    limit = max(4, int(2 * width / 6.5))
    shown = text if fits or len(text) <= limit else text[: limit - 1] + "…"
    y = H - BOTTOM + 14 + (0 if fits or i % 2 == 0 else 11)
    label = f"<title>{escape(text)}</title>{escape(shown)}"
    return f'<text x="{x:.1f}" y="{y}" class="tick" text-anchor="middle">{label}</text>'


def bar_chart(title: str, categories: list[str], series: dict[str, list[float | None]]) -> str:
    """Grouped bars: one group per category, one bar per series (None: no bar)."""
    values = [v for vs in series.values() for v in vs if v is not None]
    if not categories or not values:
        return empty_chart(title)
    ymax = _nice_max(max(values))
    parts = _frame(title, ymax, "bar")
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    group_w = plot_w / len(categories)
    bar_w = group_w * 0.8 / max(1, len(series))
    for ci, cat in enumerate(categories):
        gx = LEFT + ci * group_w + group_w * 0.1
        for si, (name, vs) in enumerate(series.items()):
            v = vs[ci] if ci < len(vs) else None
            if v is None:
                continue
            h = plot_h * v / ymax
            x, y = gx + si * bar_w, TOP + plot_h - h
            color = PALETTE[si % len(PALETTE)]
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" fill="{color}">'
                f"<title>{escape(name)} {escape(cat)}: {_num(v)}</title></rect>"
            )
        parts.append(_xlabel(LEFT + ci * group_w + group_w / 2, ci, cat, group_w))
    parts += _legend(list(series))
    parts.append("</svg>")
    return "".join(parts)


def line_chart(title: str, xs: list[str], series: dict[str, list[float | None]]) -> str:
    """Lines over the x labels, a dot per value (None: a gap)."""
    values = [v for vs in series.values() for v in vs if v is not None]
    if not xs or not values:
        return empty_chart(title)
    ymax = _nice_max(max(values))
    parts = _frame(title, ymax, "line")
    pad = 30  # keeps the first and last labels inside
    plot_w, plot_h = W - LEFT - RIGHT - 2 * pad, H - TOP - BOTTOM
    step = plot_w / (len(xs) - 1) if len(xs) > 1 else 0.0

    def px(i: int) -> float:
        return LEFT + pad + (i * step if len(xs) > 1 else plot_w / 2)

    for i, label in enumerate(xs):
        parts.append(_xlabel(px(i), i, label, step or plot_w))
    for si, (name, vs) in enumerate(series.items()):
        color = PALETTE[si % len(PALETTE)]
        points = [(px(i), TOP + plot_h - plot_h * v / ymax, v) for i, v in enumerate(vs) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
            parts.append(f'<polyline class="line" points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y, v in points:
            parts.append(
                f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}">'
                f"<title>{escape(name)}: {_num(v)}</title></circle>"
            )
    parts += _legend(list(series))
    parts.append("</svg>")
    return "".join(parts)


def empty_chart(title: str) -> str:
    return (
        f'<svg class="chart" data-kind="empty" viewBox="0 0 {W} 60" role="img" aria-label="{escape(title)}"'
        f' xmlns="http://www.w3.org/2000/svg"><text x="{LEFT}" y="18" class="chart-title">{escape(title)}</text>'
        f'<text x="{LEFT}" y="44" class="tick">no data yet</text></svg>'
    )

"""A small self-contained SVG line chart (no library, no CDN): metric against a parameter."""

from __future__ import annotations

import math
from html import escape

Series = tuple[str, list[tuple[float, float]]]  # label, points (x, y)
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2")
PLOT_W, PANEL_H, LEFT, RIGHT, TOP, BOTTOM = 520, 260, 70, 170, 30, 40
CHAR_W = 7  # px per legend character at font-size 12: the legend gets the room it needs


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    for m in (1, 2, 5, 10):
        if (hi - lo) / (step * m) <= n:
            step *= m
            break
    first = math.floor(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 2)
            if first + i * step <= hi + step * 1e-9]


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def svg(title: str, x_label: str, panels: list[tuple[str, list[Series]]],
        invalid: set[float] | None = None) -> str:
    """Panels stacked vertically, each (y label, series), sharing the x axis label; points at
    an x in `invalid` are ringed in red (a SPEC-style point that missed its rate)."""
    height = TOP + len(panels) * (PANEL_H + BOTTOM)
    longest = max((len(label) for _, series in panels for label, _ in series), default=0)
    right = max(RIGHT, 34 + CHAR_W * longest)
    width = LEFT + PLOT_W + right
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14">'
           f'{escape(title)}</text>']
    for i, (y_label, series) in enumerate(panels):
        top = TOP + i * (PANEL_H + BOTTOM)
        out.extend(_panel(top, x_label, y_label, series, invalid or set()))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _panel(top: float, x_label: str, y_label: str, series: list[Series],
           invalid: set[float]) -> list[str]:
    pts = [p for _, ps in series for p in ps]
    plot_w, plot_h = PLOT_W, PANEL_H - 30
    out = [f'<rect x="{LEFT}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
           f'stroke="#888"/>',
           f'<text x="16" y="{top + plot_h / 2}" transform="rotate(-90 16 {top + plot_h / 2})" '
           f'text-anchor="middle">{escape(y_label)}</text>',
           f'<text x="{LEFT + plot_w / 2}" y="{top + plot_h + 32}" text-anchor="middle">'
           f'{escape(x_label)}</text>']
    if not pts:
        out.append(f'<text x="{LEFT + 10}" y="{top + 20}">no data</text>')
        return out
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    x0, x1 = min(xs), max(xs)
    y0, y1 = 0.0 if min(ys) >= 0 else min(ys), max(ys) * 1.05 or 1.0
    x1 = x1 if x1 > x0 else x0 + 1

    def px(x: float) -> float:
        return LEFT + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (y - y0) / (y1 - y0) * plot_h

    for t in _ticks(y0, y1):
        out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py(t):.1f}" y2="{py(t):.1f}" '
                   f'stroke="#eee"/><text x="{LEFT - 4}" y="{py(t) + 4:.1f}" '
                   f'text-anchor="end">{_fmt(t)}</text>')
    for t in sorted(set(xs)) if len(set(xs)) <= 12 else _ticks(x0, x1):
        out.append(f'<text x="{px(t):.1f}" y="{top + plot_h + 15}" text-anchor="middle">'
                   f'{_fmt(t)}</text>')
    for k, (label, ps) in enumerate(series):
        colour = COLOURS[k % len(COLOURS)]
        ps = sorted(ps)
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in ps)
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out.extend(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}">'
                   f'<title>{escape(label)}: {_fmt(x)} → {y:.4g}</title></circle>' for x, y in ps)
        out.extend(f'<circle class="invalid" cx="{px(x):.1f}" cy="{py(y):.1f}" r="7" fill="none" '
                   f'stroke="#d00" stroke-width="2"><title>INVALID: {_fmt(x)} delivered less '
                   f'than asked</title></circle>' for x, y in ps if x in invalid)
        ly = top + 14 + 16 * k
        legend_x = LEFT + PLOT_W + 10
        out.append(f'<rect x="{legend_x}" y="{ly - 9}" width="10" height="10" '
                   f'fill="{colour}"/><text x="{legend_x + 14}" y="{ly}">{escape(label)}</text>')
    return out

"""Fewer points for display, spikes kept: a min/max envelope per time bucket.

A 24-hour run at one point a second is 86,400 points per line, far more than a chart is
pixels wide. Averaging buckets would hide the one bad second a report exists to show, so each
bucket keeps its lowest and its highest point, in time order: the drawn line still reaches
every peak and trough.
"""

from __future__ import annotations

from collections.abc import Sequence

Point = tuple[float, float | None]


def envelope_xy(xs: Sequence[float], ys: Sequence[float | None],
                max_points: int) -> tuple[list[float], list[float | None]]:
    """Parallel arrays in, at most about `max_points` points out (None = a gap, kept)."""
    n = len(xs)
    if n <= max_points or max_points < 4:
        return list(xs), list(ys)
    buckets = max_points // 2
    ox: list[float] = []
    oy: list[float | None] = []
    get = ys.__getitem__
    for b in range(buckets):
        lo, hi = b * n // buckets, (b + 1) * n // buckets
        if hi <= lo:
            continue
        idx = range(lo, hi)
        if None in ys[lo:hi]:
            idx = [i for i in idx if ys[i] is not None]  # type: ignore[assignment]
            if not idx:
                ox.append(xs[lo])
                oy.append(None)  # keep the gap visible
                continue
        i_min = min(idx, key=get)  # type: ignore[arg-type]
        i_max = max(idx, key=get)  # type: ignore[arg-type]
        for i in sorted({i_min, i_max}):
            ox.append(xs[i])
            oy.append(ys[i])
    return ox, oy


def envelope(points: Sequence[Point], max_points: int) -> list[Point]:
    """The same on (t, value) pairs."""
    if not points:
        return []
    xs, ys = zip(*points, strict=True)
    ox, oy = envelope_xy(xs, ys, max_points)
    return list(zip(ox, oy, strict=True))

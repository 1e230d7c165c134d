"""A load curve the SPECstorage way: equal steps up to the answer, each point valid only when
it delivered what it was asked, and SPEC's one-number latency (ORT) beside the real tail.

- Points: `--points N` runs N equal steps, 1/N .. N/N of the answer (SPEC: 10 points, 10 %
  to 100 % of the peak).
- Validity (sfs_rc `global oprate 95`, `proc oprate 75`): achieved >= 95 % of the requested
  rate over all fixed-rate components together, and >= 75 % for each of them (an instance:
  SPEC's is a load-generating process).
- ORT: the area under average latency against load, divided by the peak load; the first
  point's latency is held from zero load (recomputed from published curves: NetApp AFF A90
  EDA_BLENDED reads 1.10 ms by this rule against 1.17 ms published, its table rounded to
  0.1 ms). It rewards a flat curve and hides the knee, so assay prints it beside each point's
  p99 and the knee.
- Knee: the point farthest below the chord from the first to the last point, both axes
  scaled to [0, 1] (the "kneedle" rule): where p99 starts to bend upwards.
"""

from __future__ import annotations

from typing import Any

GLOBAL_VALID = 0.95
INSTANCE_VALID = 0.75


def fractions(points: int) -> tuple[float, ...]:
    return tuple(round(k / points, 6) for k in range(1, points + 1))


def validity(stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """From a trial's per-component stats (`iops`, `target`): achieved / requested overall and
    for the worst component, and whether the point is valid by SPEC's rules."""
    rated = {c: s for c, s in stats.items() if s.get("target")}
    if not rated:
        return {"overall": None, "worst": None, "valid": None}
    asked = sum(float(s["target"]) for s in rated.values())
    got = sum(float(s.get("iops") or 0.0) for s in rated.values())
    worst = min(float(s.get("iops") or 0.0) / float(s["target"]) for s in rated.values())
    overall = got / asked
    return {"overall": round(overall, 4), "worst": round(worst, 4),
            "valid": overall >= GLOBAL_VALID and worst >= INSTANCE_VALID}


def ort(curve: list[tuple[float, float]]) -> float | None:
    """SPEC's overall response time: area under latency against load / the peak load."""
    pts = sorted(curve)
    if not pts or pts[-1][0] <= 0:
        return None
    area = pts[0][0] * pts[0][1]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        area += (x1 - x0) * (y0 + y1) / 2
    return area / pts[-1][0]


def knee(curve: list[tuple[float, float]]) -> float | None:
    """The load at which latency bends upwards, or None for fewer than 3 points or a curve
    that never rises above its chord's start."""
    pts = sorted(curve)
    if len(pts) < 3:
        return None
    (x0, y0), (x1, y1) = pts[0], pts[-1]
    if x1 <= x0 or y1 <= y0:
        return None
    def below(p: tuple[float, float]) -> float:
        x, y = (p[0] - x0) / (x1 - x0), (p[1] - y0) / (y1 - y0)
        return x - y
    best = max(pts[1:-1], key=below)
    return best[0] if below(best) > 0 else None

"""Where to try next: the pure logic of a limit search, replayable from stored trials.

The search keeps a bracket: the largest value that passed (`lo`) and the smallest that failed
(`hi`). It is stateless — the next value depends only on the trials so far — so a killed
search resumes by replaying its stored trials.

The coarse phase is smart about rates: the top of the range is tried first; a platform that
cannot keep up fails it within seconds (early stop) and the rate it *delivered* estimates the
limit (value × achieved / target). The next trials land just under, then just over, that
estimate, and bisection closes what is left. Parameters that are not rates (threads, queue
depth under a latency bound) give no estimate and get a geometric bisection from `from`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Space:
    low: float  # --from
    high: float  # --to
    precision: float  # relative: stop when (hi - lo) / lo <= precision
    integer: bool = False
    max_trials: int = 20


@dataclass(frozen=True)
class Point:
    """What the search needs to know of one finished trial."""

    value: float
    passed: bool
    delivered: float | None = None  # achieved / target of fixed-rate components (min), or None


@dataclass(frozen=True)
class Answer:
    status: str  # found / below-range (even --from fails) / above-range (--to passes) / limit
    last_pass: float | None
    first_fail: float | None
    precision: float | None  # relative gap reached: (first_fail - last_pass) / last_pass


def bracket(points: list[Point]) -> tuple[float | None, float | None]:
    passes = [p.value for p in points if p.passed]
    fails = [p.value for p in points if not p.passed]
    return (max(passes) if passes else None), (min(fails) if fails else None)


def gap(lo: float | None, hi: float | None) -> float | None:
    if lo is None or hi is None or lo <= 0:
        return None
    return (hi - lo) / lo


def _round(space: Space, v: float) -> float:
    return float(round(v)) if space.integer else float(f"{v:.4g}")


def estimate(points: list[Point], space: Space) -> float | None:
    """The limit suggested by the lowest failing trial's delivered rate, when it fell short."""
    fails = sorted((p for p in points if not p.passed), key=lambda p: p.value)
    if not fails or fails[0].delivered is None:
        return None
    d = fails[0].delivered
    if d >= 1 - space.precision / 2:  # it failed on something else than the rate (latency)
        return None
    return fails[0].value * d


def done(points: list[Point], space: Space) -> Answer | None:
    """The answer when the search is over, else None."""
    lo, hi = bracket(points)
    if hi is not None and hi <= space.low:
        return Answer("below-range", None, hi, None)
    if lo is not None and lo >= space.high:
        return Answer("above-range", lo, None, None)
    g = gap(lo, hi)
    close = g is not None and (g <= space.precision or
                               (space.integer and lo is not None and hi is not None
                                and hi - lo <= 1))
    if close:
        return Answer("found", lo, hi, g)
    if len(points) >= space.max_trials:
        return Answer("limit", lo, hi, g)
    return None


def next_value(points: list[Point], space: Space) -> float | None:
    """The value to try next, or None when `done` has an answer."""
    if done(points, space):
        return None
    tried = {p.value for p in points}
    if not points:
        return _round(space, space.high)
    lo, hi = bracket(points)
    ceiling = hi if hi is not None else space.high
    floor = lo if lo is not None else space.low
    est = estimate(points, space)
    p = space.precision
    candidates: list[float] = []
    if est is not None:
        if lo is None or est > lo * (1 + p):
            candidates.append(est * (1 - p / 2))  # just under the estimate: expect a pass
        if lo is not None:
            # just over the last pass, expecting a fail; each further pass above the estimate
            # doubles the step, so a low estimate costs log, not linear, trials
            k = max(sum(1 for q in points if q.passed and q.value > est * (1 - p)) - 1, 0)
            candidates.append(lo * (1 + p * 0.9 * 2 ** min(k, 8)))
    if lo is None:
        rated = [q for q in points if not q.passed and q.delivered is not None and
                 q.delivered < 1 - p / 2]
        if rated and hi is not None:
            # a rate search whose estimate failed too: step down, doubling the step each time
            k = sum(1 for q in points if not q.passed and q.value < space.high)
            candidates.append(hi * max(1 - p * 2 ** k, 0.5))
        candidates.append(space.low)
    candidates.append(_midpoint(floor, ceiling))
    for c in candidates:
        v = _round(space, min(max(c, space.low), space.high))
        inside = (lo is None or v > lo) and (hi is None or v < hi)
        if inside and v not in tried:
            return v
    # nothing strictly inside: the bracket is as tight as the value type allows
    return None


def _midpoint(lo: float, hi: float) -> float:
    if lo > 0 and hi / lo > 2:
        return math.sqrt(lo * hi)  # wide brackets close faster in ratio than in difference
    return (lo + hi) / 2


def decide(points: list[Point], space: Space) -> float | Answer:
    """The next value to try, or the answer."""
    answer = done(points, space)
    if answer:
        return answer
    v = next_value(points, space)
    if v is not None:
        return v
    lo, hi = bracket(points)
    return Answer("found", lo, hi, gap(lo, hi))

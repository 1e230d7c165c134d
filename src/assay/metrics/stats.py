"""Statistics of measurements: mean and 95 % confidence interval (Student t), Welch's t-test for
whether two means differ beyond noise, and a batch-means version of it for autocorrelated
per-second series. Used by repeats (search) and compare.

No scipy: Student t quantiles are found by inverting the t distribution function (the
regularized incomplete beta) with bisection, exact at fractional degrees of freedom as
Welch's are; p-values come from the same function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Z975 = 1.959963984540054  # the normal 97.5 % quantile: t975 at df = ∞
ALPHA = 0.05  # two means differ when Welch's two-sided p-value is below this


def t_tail(t: float, df: float) -> float:
    """P(|T| > t), two-sided, for Student's T with `df` degrees of freedom (df > 0)."""
    if df > 1e7:  # the normal, within 1e-6; lgamma of such df loses too many digits
        return math.erfc(abs(t) / math.sqrt(2))
    t2 = t * t
    # x and 1 - x computed apart: for large df, x is within 1e-6 of 1
    return _betai(df / 2, 0.5, df / (df + t2), t2 / (df + t2))


def t_quantile(p: float, df: float) -> float:
    """The `p` quantile of Student's t with `df` (> 0, may be fractional) degrees of freedom."""
    if not 0 < p < 1:
        raise ValueError("p must be between 0 and 1")
    if not df > 0:
        raise ValueError("need more than 0 degrees of freedom")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    tail = 2 * (1 - p)  # the two-sided tail P(|T| > t) of the answer
    if tail >= 1:
        return 0.0
    lo, hi = 0.0, 2.0
    while t_tail(hi, df) > tail:  # bracket: the tail falls as t grows
        lo, hi = hi, hi * 2
    # bisection: slower than Newton but cannot diverge, whatever df
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_tail(mid, df) > tail:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return (lo + hi) / 2


def t975(df: float) -> float:
    """The 97.5 % quantile of Student's t with `df` degrees of freedom (df may be fractional,
    as Welch's is; ∞ gives the normal quantile)."""
    if df < 1:
        raise ValueError("need at least 1 degree of freedom")
    return Z975 if math.isinf(df) else t_quantile(0.975, df)


def summarise(values: Sequence[float]) -> dict[str, Any]:
    """n, mean, sample standard deviation, 95 % CI of the mean and its half width."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return {"n": 0, "mean": None, "stdev": None, "ci95": None, "half_width": None,
                "values": []}
    mean = sum(xs) / n
    if n == 1:
        return {"n": 1, "mean": mean, "stdev": None, "ci95": None, "half_width": None,
                "values": xs}
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "stdev": sd, "ci95": [mean - half, mean + half],
            "half_width": half, "values": xs}


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h


def _betai(a: float, b: float, x: float, y: float | None = None) -> float:
    """Regularized incomplete beta I_x(a, b); `y` is 1 - x when the caller has it exactly."""
    y = 1 - x if y is None else y
    if x <= 0:
        return 0.0
    if y <= 0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log(y))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def welch_p(m1: float, v1: float, n1: int, m2: float, v2: float, n2: int) -> float | None:
    """Two-sided p-value of Welch's t-test from means, variances and counts."""
    if n1 < 2 or n2 < 2:
        return None
    se2 = v1 / n1 + v2 / n2
    if se2 <= 0:
        return 1.0 if m1 == m2 else 0.0
    t = (m1 - m2) / math.sqrt(se2)
    df = se2 ** 2 / ((v1 / n1) ** 2 / (n1 - 1) + (v2 / n2) ** 2 / (n2 - 1))
    return t_tail(t, df)


def mean_var(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, sum((x - m) ** 2 for x in xs) / (len(xs) - 1) if len(xs) > 1 else 0.0


# -- autocorrelated series: Welch on batch means --------------------------------------------------
# Per-second storage metrics are autocorrelated (a busy second is followed by a busy second), so
# seconds are not independent samples and Welch on them calls noise a difference. Means of
# batches of consecutive seconds are nearly independent once a batch outlasts the correlation;
# Welch on those is honest. The batch length comes from the data.

MIN_BATCHES = 6  # per series: fewer leave Welch too few degrees of freedom
MAX_LAG1 = 0.1  # batch means count as uncorrelated below this lag-1 autocorrelation


def batch_means(xs: Sequence[float], size: int) -> list[float]:
    """Means of consecutive batches of `size` values; the leftover at the start (nearest the
    warm-up) is dropped."""
    skip = len(xs) % size
    return [sum(xs[i:i + size]) / size for i in range(skip, len(xs), size)]


def lag1(*series: Sequence[float]) -> float:
    """Lag-1 autocorrelation pooled over series (each about its own mean), corrected for the
    -1/n bias of short series."""
    num = den = 0.0
    for xs in series:
        m = sum(xs) / len(xs)
        d = [x - m for x in xs]
        num += sum(a * b for a, b in zip(d, d[1:], strict=False))
        den += sum(a * a for a in d)
    if den <= 0:
        return 0.0
    return num / den + len(series) / sum(len(xs) for xs in series)


@dataclass(frozen=True)
class BatchTest:
    p: float | None  # Welch's two-sided p-value on the batch means
    size: int  # values (seconds) per batch
    batches: tuple[int, int]  # batches per series
    correlated: bool  # even the longest batches allowed were still correlated


def batch_size(*series: Sequence[float]) -> tuple[int, bool]:
    """Twice the shortest batch whose means are nearly uncorrelated (pooled over the series), but
    no longer than leaves MIN_BATCHES per series; and whether even that was still correlated.
    Twice, because the lag-1 estimate from few batches is noisy and stops too early more often
    than too late: tested on a real series (tests/fixtures/series/) this keeps noise at ~5 %."""
    longest = max(1, min(len(xs) for xs in series) // MIN_BATCHES)
    size = 1
    while size <= longest:
        if lag1(*(batch_means(xs, size) for xs in series)) < MAX_LAG1:
            return min(2 * size, longest), False
        size = max(size + 1, round(size * 1.25))  # geometric: an 8-hour run stays quick
    return longest, longest > 1


def batch_welch(a: Sequence[float], b: Sequence[float]) -> BatchTest:
    """Welch's t-test of two autocorrelated series on batch means of a common length."""
    if len(a) < 2 or len(b) < 2:
        return BatchTest(None, 1, (len(a), len(b)), False)
    size, correlated = batch_size(a, b)
    ma, mb = batch_means(a, size), batch_means(b, size)
    (m1, v1), (m2, v2) = mean_var(ma), mean_var(mb)
    return BatchTest(welch_p(m1, v1, len(ma), m2, v2, len(mb)), size, (len(ma), len(mb)),
                     correlated)

"""Statistics of repeated measurements: mean and 95 % confidence interval (Student t), and
Welch's t-test for whether two differ beyond noise. Used by repeats (search) and compare.

No scipy: the two-sided 95 % t quantiles are tabulated (df 1-30, then 40, 60, 120, ∞) and
interpolated in 1/df between table rows, within 0.1 % of the exact value; Welch's p-value
comes from the regularized incomplete beta function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

# two-sided 95 %: t(0.975, df)
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
        17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069,
        24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042,
        40: 2.021, 60: 2.000, 120: 1.980}
Z975 = 1.960
ALPHA = 0.05  # two means differ when Welch's two-sided p-value is below this


def t975(df: float) -> float:
    """The 97.5 % quantile of Student's t with `df` degrees of freedom (df may be fractional,
    as Welch's is)."""
    if df < 1:
        raise ValueError("need at least 1 degree of freedom")
    if df == int(df) and int(df) in T975:
        return T975[int(df)]
    keys = sorted(T975)
    lower = max((k for k in keys if k <= df), default=1)
    upper = min((k for k in keys if k > df), default=None)
    if upper is None:  # beyond 120: interpolate towards the normal in 1/df
        w = (1 / lower - 1 / df) / (1 / lower)
        return T975[lower] + (Z975 - T975[lower]) * w
    w = (1 / lower - 1 / df) / (1 / lower - 1 / upper)
    return T975[lower] + (T975[upper] - T975[lower]) * w


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


def _betai(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log(1 - x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1 - x) / b


def welch_p(m1: float, v1: float, n1: int, m2: float, v2: float, n2: int) -> float | None:
    """Two-sided p-value of Welch's t-test from means, variances and counts."""
    if n1 < 2 or n2 < 2:
        return None
    se2 = v1 / n1 + v2 / n2
    if se2 <= 0:
        return 1.0 if m1 == m2 else 0.0
    t = (m1 - m2) / math.sqrt(se2)
    df = se2 ** 2 / ((v1 / n1) ** 2 / (n1 - 1) + (v2 / n2) ** 2 / (n2 - 1))
    return _betai(df / 2, 0.5, df / (df + t * t))


def mean_var(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, sum((x - m) ** 2 for x in xs) / (len(xs) - 1) if len(xs) > 1 else 0.0

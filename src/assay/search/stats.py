"""Mean and 95 % confidence interval (Student t) of repeated runs, and whether two differ.

No scipy: the two-sided 95 % t quantiles are tabulated (df 1-30, then 40, 60, 120, ∞) and
interpolated in 1/df between table rows, which is within 0.1 % of the exact value.
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


def differ(a: dict[str, Any], b: dict[str, Any]) -> bool | None:
    """Welch's t test at 95 %: True when the means of two summaries differ beyond noise,
    False when they do not, None when either has fewer than 2 runs."""
    if a.get("n", 0) < 2 or b.get("n", 0) < 2:
        return None
    va, vb = a["stdev"] ** 2 / a["n"], b["stdev"] ** 2 / b["n"]
    diff = abs(a["mean"] - b["mean"])
    if va + vb == 0:
        return diff > 0
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va ** 2 / (a["n"] - 1) if va else 0) +
                           (vb ** 2 / (b["n"] - 1) if vb else 0))
    return t > t975(max(df, 1.0))

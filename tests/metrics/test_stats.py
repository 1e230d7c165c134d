"""Repeat statistics: Student t intervals, the Welch difference test and its batch-means form for
autocorrelated per-second series."""

from __future__ import annotations

import csv
import math
import random
import statistics
from pathlib import Path

import pytest

from assay.metrics.stats import (
    ALPHA,
    MIN_BATCHES,
    batch_size,
    batch_welch,
    mean_var,
    summarise,
    t975,
    t_quantile,
    welch_p,
)


@pytest.mark.parametrize("df,exact", [(1, 12.706), (4, 2.776), (30, 2.042), (35, 2.030),
                                      (50, 2.009), (100, 1.984), (1000, 1.962)])
def test_t_quantiles(df, exact):
    assert t975(df) == pytest.approx(exact, abs=0.003)


def test_interval_of_five_runs():
    s = summarise([10, 12, 11, 13, 9])
    assert s["n"] == 5 and s["mean"] == 11
    assert s["stdev"] == pytest.approx(math.sqrt(2.5))
    assert s["half_width"] == pytest.approx(2.776 * math.sqrt(2.5) / math.sqrt(5), rel=1e-3)
    assert s["ci95"][0] < 11 < s["ci95"][1]


def test_one_run_has_no_interval():
    assert summarise([3.0])["ci95"] is None and summarise([])["mean"] is None


def p_of(a: list[float], b: list[float]) -> float | None:
    sa, sb = summarise(a), summarise(b)
    return welch_p(sa["mean"], (sa["stdev"] or 0) ** 2, sa["n"],
                   sb["mean"], (sb["stdev"] or 0) ** 2, sb["n"])


def test_real_difference_and_noise():
    a = [10, 12, 11, 13, 9]
    assert p_of(a, [10.5, 11, 12, 11.5, 10]) > 0.05
    assert p_of(a, [20, 21, 19, 22, 20]) < 0.05
    assert p_of(a, [20]) is None


# -- the t quantile, exact at fractional degrees of freedom --------------------------------------

@pytest.mark.parametrize("df,table", [(1, 12.7062), (2, 4.3027), (5, 2.5706), (10, 2.2281),
                                      (30, 2.0423), (120, 1.9799), (math.inf, 1.95996)])
def test_t975_matches_published_tables(df, table):
    assert t975(df) == pytest.approx(table, rel=1e-4)


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995, 0.9995])
def test_t_quantile_matches_closed_forms(p):
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)  # Cauchy
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)
    a = 4 * p * (1 - p)
    q = math.cos(math.acos(math.sqrt(a)) / 3) / math.sqrt(a)
    assert t_quantile(p, 4) == pytest.approx(2 * math.sqrt(q - 1), rel=1e-9)
    assert t_quantile(1 - p, 3.3) == -t_quantile(p, 3.3)


def t_cdf(t: float, df: float, steps: int = 2000) -> float:
    """P(T <= t), t >= 0, by Simpson's rule on the density: independent of the code under test."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    h = t / steps
    f = [c * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2) for i in range(steps + 1)]
    return 0.5 + h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))


@pytest.mark.parametrize("df", [1.1, 1.5, 1.9, 2.5, 3.7, 7.3, 15.5, 47.2])
def test_t975_at_fractional_df(df):
    lo, hi = 1.9, 13.0  # t975 for df >= 1 lies between these
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < 0.975 else (lo, mid)
    assert t975(df) == pytest.approx(lo, rel=1e-4)
    assert t975(math.ceil(df)) < t975(df) < t975(math.floor(df))


def test_welch_p_at_large_df_is_the_normal():
    # n = 10^6 per side: df ~ 2e6, where 1 - x loses digits unless computed apart
    assert welch_p(0, 1e6, 10 ** 6, 1.959963984540054 * math.sqrt(2), 1e6, 10 ** 6) == \
        pytest.approx(0.05, rel=1e-5)


# -- the noise test on autocorrelated per-second series -------------------------------------------

SERIES = Path(__file__).parents[1] / "fixtures" / "series" / "randread-8k-qd16.csv"
PAIRS, BLOCK = 20, 20  # 20 pairs of runs; resampled in blocks of 20 s, as long as most correlation


def recorded(metric: str) -> list[float]:
    """A real fio run's per-second values (see the fixture's README)."""
    with SERIES.open() as f:
        return [float(row[metric]) for row in csv.DictReader(f)]


def block_bootstrap(xs: list[float], rng: random.Random) -> list[float]:
    """A stationary run as long as xs, from blocks of BLOCK consecutive seconds of it (circular):
    the seconds keep their correlation within a block."""
    out: list[float] = []
    while len(out) < len(xs):
        start = rng.randrange(len(xs))
        out += [xs[(start + i) % len(xs)] for i in range(BLOCK)]
    return out[:len(xs)]


def pairs(metric: str) -> list[tuple[list[float], list[float]]]:
    xs, rng = recorded(metric), random.Random(8)
    return [(block_bootstrap(xs, rng), block_bootstrap(xs, rng)) for _ in range(PAIRS)]


def per_second_welch(a: list[float], b: list[float]) -> float | None:
    """The test compare used before batch means: Welch on the seconds as if independent."""
    (ma, va), (mb, vb) = mean_var(a), mean_var(b)
    return welch_p(ma, va, len(a), mb, vb, len(b))


@pytest.mark.parametrize("metric", ["iops", "lat_p99_ms"])
def test_noise_of_a_real_run_is_called_noise(metric):
    runs = pairs(metric)
    noise = sum(batch_welch(a, b).p >= ALPHA for a, b in runs)
    assert noise >= 18, f"{metric}: {noise}/20 called noise"
    old = sum(per_second_welch(a, b) >= ALPHA for a, b in runs)
    assert old < 18, f"{metric}: the per-second Welch called {old}/20 noise"  # what we fixed


def test_a_10_percent_shift_in_iops_is_called_real():
    # IOPS only: p99 of this run wanders by more than 10 % from one half minute to the next, so
    # 4 minutes cannot tell a 10 % change in it from noise, and the test rightly does not try
    runs = pairs("iops")
    shift = 0.10 * statistics.fmean(recorded("iops"))
    real = sum(batch_welch(a, [x + shift for x in b]).p < ALPHA for a, b in runs)
    assert real >= 18, f"{real}/20 shifted pairs called real"


def test_batch_length_follows_the_correlation():
    rng = random.Random(3)
    iid = [rng.gauss(0, 1) for _ in range(600)]
    ar = [0.0]
    for _ in range(599):
        ar.append(0.95 * ar[-1] + rng.gauss(0, 1))
    assert batch_size(iid, iid[::-1]) == (2, False)  # uncorrelated: barely batched
    size, _ = batch_size(ar, ar[::-1])
    assert size >= 20  # correlation time ~40 s: long batches
    assert batch_size([1.0] * 8, [2.0] * 8) == (1, False)  # too short to batch
    test = batch_welch(ar, [x + 100 for x in ar])
    assert test.p is not None and test.p < 1e-6 and test.batches[0] >= MIN_BATCHES
    assert batch_welch([1.0], [2.0, 3.0]).p is None

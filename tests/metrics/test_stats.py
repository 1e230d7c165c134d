"""Repeat statistics: Student t intervals and the Welch difference test."""

from __future__ import annotations

import math

import pytest

from assay.metrics.stats import summarise, t975, welch_p


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

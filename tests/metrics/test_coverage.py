"""How many of the measured seconds the samples grade (metrics/coverage.py)."""

from __future__ import annotations

import pytest

from assay.metrics.coverage import Coverage, coverage
from assay.metrics.summary import ComponentInfo

INFO = [ComponentInfo("db.data.read", 100.0)]


def rows(ends: list[float], start: float = 0.0) -> list[dict]:
    out, prev = [], start
    for t in ends:
        out.append({"c": "db.data.read", "t": t, "dt": t - prev})
        prev = t
    return out


@pytest.mark.parametrize("phase", [0.0, 0.05, 0.45, 0.55, 0.95])
def test_one_second_dumps_grade_the_whole_window_wherever_they_fall(phase):
    ends = [phase + i for i in range(1, 9)] + [8.0]  # fio's closing stub at its runtime
    got = coverage(INFO, rows([t for t in ends if t <= 8.0]), 2.0, 8.0)
    assert got.complete and got.graded_s == pytest.approx(6.0, abs=0.01)


def test_a_compressed_axis_is_not_a_complete_run():
    # the old anchor on job_runtime: the 6 s window was graded on the 2.45 s its axis reached
    got = coverage(INFO, rows([0.84, 2.0, 3.2, 4.4, 4.45]), 2.0, 8.0)
    assert not got.complete and got.graded_s < 3.5
    assert "graded" in got.reason() and "of the 6.0s measured" in got.reason()


def test_a_sample_that_mixes_warmup_into_the_window_grades_nothing():
    # the first dump after 4.7 s: its middle is in the window, but 2 s of it are warm-up
    got = coverage(INFO, rows([4.7, 5.8, 7.0, 8.0]), 2.0, 8.0)
    assert got.graded_s == pytest.approx(8.0 - 4.2, abs=0.01) and not got.complete


def test_no_samples_is_nothing_graded():
    got = coverage(INFO, [], 2.0, 8.0)
    assert got == Coverage(6.0, 0.0) and not got.complete
    assert not Coverage(0.0, 0.0).complete  # and a window never reached: nothing measured


def test_a_run_that_ended_early_is_measured_up_to_its_last_sample():
    got = coverage(INFO, rows([1.0, 2.0, 3.0, 4.0]), 2.0, 8.0, ended_early=True)
    assert got.measured_s == pytest.approx(2.0) and got.graded_s == pytest.approx(2.0)


def test_a_component_with_its_own_window_is_graded_by_every_overlapping_sample():
    late = [ComponentInfo("db.data.read", 100.0, start_s=3.0)]
    got = coverage(late, rows([1.0, 2.0, 3.5, 5.0, 6.5, 8.0]), 2.0, 8.0)
    assert got.graded_s == pytest.approx(5.0)  # its window is [3, 8]


def test_timed_bursts_vouch_for_no_second_and_alone_are_measured_to_their_end():
    burst = ComponentInfo("ckpt.save.write", None, timed=True)
    samples = [{"c": "ckpt.save.write", "t": t, "dt": 1.0} for t in (1.0, 2.0)]
    alone = coverage([burst], samples, 0.0, 30.0)  # a checkpoint's save ends after 2 s
    assert alone.complete and alone.measured_s == pytest.approx(2.0)
    # beside a steady component, the bursts' seconds grade nothing of its window
    mixed = coverage([*INFO, burst], samples, 0.0, 8.0)
    assert not mixed.complete and mixed.graded_s == 0.0

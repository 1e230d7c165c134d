"""Window statistics from stored per-second samples."""

import pytest

from assay.metrics.summary import ComponentInfo, aggregate


def sample(t: float, ios: int, dt: float = 1.0, c: str = "w.s.read") -> dict:
    return {"t": t, "dt": dt, "c": c, "ios": ios, "bytes": ios * 4096, "lat_sum_ns": ios * 1e5,
            "lat_max_ns": 200_000, "behind_s": 0.0, "bins": {"100000": ios}}


def test_a_late_component_is_rated_over_its_own_window_despite_uneven_dumps():
    info = ComponentInfo("w.s.read", target_iops=100, start_s=3.0, end_s=5.0)
    # idle until 3 s; fio's dumps came at 2.0, 4.2, 4.6, 5.6: uneven, straddling the window
    samples = [sample(2.0, 0), sample(4.2, 120, 2.2), sample(4.6, 40, 0.4), sample(5.6, 40, 1.0),
               sample(6.6, 0)]
    s = aggregate(info, samples, 0.0, 10.0)
    assert s.seconds == pytest.approx(2.0) and s.ios == 200 and s.iops == pytest.approx(100)


def test_a_phase_passes_a_subset_and_gets_that_subsets_rate():
    info = ComponentInfo("w.s.read", target_iops=100, start_s=3.0, end_s=8.0)
    samples = [sample(t, 100) for t in (4.0, 5.0, 6.0, 7.0, 8.0)]
    s = aggregate(info, samples[1:2], 0.0, 10.0)  # one second of the window, as a phase would
    assert s.seconds == 1.0 and s.iops == 100


def test_an_ordinary_component_counts_intervals_by_their_middle():
    info = ComponentInfo("w.s.read", target_iops=100)
    samples = [sample(t, 100) for t in (1.0, 2.0, 3.0, 4.0)] + [sample(4.05, 0, 0.05)]
    s = aggregate(info, samples, 1.0, 4.0)  # the first second is warm-up; the stub is no rate
    assert s.iops == 100 and s.ios == 300


def test_the_running_median_of_a_day_of_seconds_is_close_and_small():
    import random

    from assay.metrics.median import RunningMedian, median

    rng = random.Random(3)
    values = [rng.gauss(4200, 60) / rng.choice((0.998, 1.0, 1.003)) for _ in range(86_400)]
    m = RunningMedian()
    for v in values:
        m.add(v)
    exact = median(values)
    assert exact is not None and m.value() is not None
    assert abs(m.value() - exact) <= 0.005 * exact
    assert len(m._counts) < 200  # not one entry per second

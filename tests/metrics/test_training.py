"""The simulated accelerators of kind ai-training, counted by hand."""

import pytest

from assay.metrics.summary import Accumulator, ComponentInfo
from assay.metrics.training import AcceleratorClock, Training, weighted_percentile

MB = 1_000_000


def model(accelerators: float = 2, prefetch: float = 0.0) -> Training:
    # a batch of 10 MB every 0.5 s per accelerator: 2 accelerators need 40 MB/s
    return Training(accelerators, batch_bytes=10 * MB, compute_s=0.5, sample_bytes=MB,
                    prefetch=prefetch, au_target=90.0)


def test_a_storage_that_keeps_up_keeps_the_accelerators_busy() -> None:
    clock = AcceleratorClock(model())
    for _ in range(10):
        clock.add(40 * MB, 1.0)
    f = clock.figures()
    assert f["au"] == 100.0 and f["au_min"] == 100.0
    assert f["samples_s"] == 40.0  # 4 batches of 10 samples per second
    assert f["batch_wait_p50"] == 0.0 and f["batch_wait_p99"] == 0.0


def test_half_the_bytes_is_half_the_compute_and_each_batch_waits_a_compute_time() -> None:
    clock = AcceleratorClock(model())
    for _ in range(10):
        clock.add(20 * MB, 1.0)
    f = clock.figures()
    # by hand: 2 batches a second over 2 accelerators, 1 each: 0.5 s computing, 0.5 s waiting
    assert f["au"] == 50.0 and f["samples_s"] == 20.0
    assert f["batch_wait_p50"] == pytest.approx(500.0)


def test_a_stall_is_lost_time_that_catching_up_does_not_give_back() -> None:
    clock = AcceleratorClock(model())
    for nbytes in (40, 0, 0, 120, 40):  # a 2 s stall, then fio reads 3 s worth at once
        clock.add(nbytes * MB, 1.0)
    f = clock.figures()
    # by hand: seconds 1, 4, 5 busy (4 batches each), 2 and 3 idle; 8 batches left over
    # beyond the (empty) prefetch queue are thrown away: DLIO's readers would not have read
    assert f["au"] == pytest.approx(60.0)
    assert f["au_min"] == 0.0
    # 12 batches: 8 without a wait, 4 (second 4, 2 per accelerator) after 2 s idle each
    assert f["batches"] == 12
    assert f["batch_wait_p50"] == 0.0 and f["batch_wait_p99"] == pytest.approx(1000.0)


def test_a_full_prefetch_queue_absorbs_a_short_stall() -> None:
    clock = AcceleratorClock(model(prefetch=8))
    for nbytes in (40, 0, 80, 40):
        clock.add(nbytes * MB, 1.0)
    # the queue of 8 batches (2 s of compute) covers the second without data
    assert clock.figures()["au"] == 100.0


def test_the_warm_up_drains_the_queue_before_grading() -> None:
    info = ComponentInfo("t.data.read", 4.0, training=model(prefetch=8))
    acc = Accumulator(info, start=5.0, end=15.0)
    for t in range(1, 16):  # 20 MB/s against 40 MB/s: slow from the first second
        acc.add({"t": float(t), "dt": 1.0, "c": "t.data.read", "ios": 20, "bytes": 20 * MB,
                 "lat_sum_ns": 0.0, "lat_max_ns": 1, "bins": {}})
    # 8 queued batches drained in the 5 s warm-up (2 a second short): none left to flatter
    assert acc.stats().metric("au") == 50.0


def test_weighted_percentile() -> None:
    points = [(0.0, 98.0), (1.0, 1.0), (5.0, 1.0)]
    assert weighted_percentile(points, 50) == 0.0
    assert weighted_percentile(points, 99) == 1.0
    assert weighted_percentile(points, 100) == 5.0
    assert weighted_percentile([], 50) is None

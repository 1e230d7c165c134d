"""Rebuild time and data-loss probability against sizing-rules §4.2 and Backblaze's check."""

import pytest

from assay.sizing import reliability

TB = 1e12
MB = 1e6

# sizing-rules §4.2: node AFR 5 %, 20 TB used per node, 200 MB/s per node, 60 s detection
TABLE = [  # N, rebuild hours, P(loss)/yr RF2, RF3
    (4, 9.3, 3.2e-5, None), (6, 5.6, 4.8e-5, 3.0e-9), (8, 4.0, 6.4e-5, 4.4e-9),
    (12, 2.5, 9.6e-5, 7.0e-9), (16, 1.9, 1.3e-4, 9.6e-9), (24, 1.2, 1.9e-4, 1.5e-8),
    (32, 0.9, 2.6e-4, 2.0e-8)]


@pytest.mark.parametrize("n, hours, rf2, rf3", TABLE)
def test_illustrative_table(n, hours, rf2, rf3):
    t = reliability.rebuild_hours(20 * TB, n, 200 * MB)
    assert t == pytest.approx(hours, abs=0.05)
    p2 = reliability.annual_loss_probability(reliability.loss_rate_per_hour(n, 0.05, t, 1))
    assert p2 == pytest.approx(rf2, rel=0.05)
    if rf3 is not None:
        p3 = reliability.annual_loss_probability(reliability.loss_rate_per_hour(n, 0.05, t, 2))
        assert p3 == pytest.approx(rf3, rel=0.05)


def test_n_plus_0_waits_for_the_part_and_is_12x_worse():
    p = reliability.annual_loss_probability(reliability.loss_rate_per_hour(8, 0.05, 48, 1))
    assert p == pytest.approx(7.7e-4, rel=0.02)
    healed = reliability.annual_loss_probability(
        reliability.loss_rate_per_hour(8, 0.05, reliability.rebuild_hours(20 * TB, 8, 200 * MB),
                                       1))
    assert p / healed == pytest.approx(12, rel=0.1)


def test_backblaze_4_plus_2_check_value():
    assert reliability.ec_group_annual_loss(4, 2, 0.10, 1) == pytest.approx(1.5e-7, rel=0.05)


def test_more_nodes_rebuild_faster_but_rf2_loss_still_grows():
    t8 = reliability.rebuild_hours(20 * TB, 8, 200 * MB)
    t16 = reliability.rebuild_hours(20 * TB, 16, 200 * MB)
    assert t16 < t8
    assert reliability.loss_rate_per_hour(16, 0.05, t16, 1) > \
        reliability.loss_rate_per_hour(8, 0.05, t8, 1)


def test_nines():
    assert reliability.nines(1e-5) == pytest.approx(5)
    assert reliability.nines(0.001) == pytest.approx(3)
    assert reliability.nines(0) == float("inf")


def test_unavailability_is_loss_rate_times_restore_time():
    rate = reliability.loss_rate_per_hour(8, 0.05, 4.0, 1)
    assert reliability.unavailability(rate, 24) == pytest.approx(rate * 24)
    assert reliability.unavailability(1.0, 24) == 1.0  # a share, never above 1

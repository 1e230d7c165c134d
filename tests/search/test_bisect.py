"""The search logic on simulated platforms: brackets, estimates, stop rules, resumability."""

from __future__ import annotations

import pytest

from assay.search.bisect import Answer, Point, Space, decide


def simulate(cap: float, space: Space, rate: bool = True) -> tuple[Answer, list[Point]]:
    """A platform that passes every value up to `cap`; a rate platform delivers `cap`."""
    points: list[Point] = []
    while not isinstance(step := decide(points, space), Answer):
        assert step not in [p.value for p in points], "a value was tried twice"
        ok = step <= cap
        points.append(Point(step, ok, None if ok or not rate else min(1.0, cap / step)))
    return step, points


@pytest.mark.parametrize("cap", [60, 137, 400, 1234, 4100])
def test_rate_limits_are_found_within_precision_in_few_trials(cap):
    answer, points = simulate(cap, Space(50, 5000, 0.02))
    assert answer.status == "found"
    assert answer.last_pass <= cap < answer.first_fail
    assert answer.precision <= 0.02
    assert len(points) <= 5


@pytest.mark.parametrize("error", [0.9, 0.95, 1.05, 1.1])
def test_a_wrong_estimate_costs_few_extra_trials(error):
    """The short, early-stopped first trial misjudges the limit by ±10 % (later trials run to
    the end and measure it well): still within 8 trials."""
    cap, space = 400, Space(50, 5000, 0.02)
    points: list[Point] = []
    while not isinstance(step := decide(points, space), Answer):
        ok = step <= cap
        seen = cap * error if not points else cap
        points.append(Point(step, ok, None if ok else min(1.0, seen / step)))
    assert step.last_pass <= cap < step.first_fail and step.precision <= 0.02
    assert len(points) <= 8


def test_without_estimate_it_bisects_geometrically():
    answer, points = simulate(400, Space(50, 5000, 0.02), rate=False)
    assert answer.status == "found" and answer.last_pass <= 400 < answer.first_fail
    assert points[0].value == 5000 and points[1].value == 50
    assert len(points) <= 12


def test_integers_stop_at_adjacent_values():
    answer, points = simulate(7, Space(1, 64, 0.02, integer=True), rate=False)
    assert (answer.last_pass, answer.first_fail) == (7, 8)
    assert all(float(p.value).is_integer() for p in points)


def test_out_of_range_answers():
    assert simulate(30, Space(50, 5000, 0.02))[0].status == "below-range"
    assert simulate(9000, Space(50, 5000, 0.02))[0].status == "above-range"


def test_trial_limit_gives_best_so_far():
    answer, points = simulate(400, Space(50, 5000, 0.001, max_trials=3), rate=False)
    assert answer.status == "limit" and len(points) == 3


def test_next_value_depends_only_on_the_trials_so_far():
    """Resuming replays stored trials: the same trials give the same next value."""
    space = Space(50, 5000, 0.02)
    _, points = simulate(400, space)
    for i in range(len(points)):
        assert decide(points[:i], space) == points[i].value


def test_an_estimate_that_fails_too_steps_down_not_to_the_bottom():
    """Every failing trial over-reports by 10 %: it steps down from the failure, not to
    --from, and still brackets the limit."""
    cap, space = 400, Space(50, 5000, 0.02)
    points: list[Point] = []
    while not isinstance(step := decide(points, space), Answer):
        ok = step <= cap
        points.append(Point(step, ok, None if ok else min(1.0, cap * 1.1 / step)))
    assert step.last_pass <= cap < step.first_fail and step.precision <= 0.02
    assert 50 not in [p.value for p in points]
    assert len(points) <= 10

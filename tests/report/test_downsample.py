"""The display envelope keeps every spike and trough while bounding the number of points."""

from __future__ import annotations

import random

from assay.report.downsample import envelope


def test_short_series_is_untouched() -> None:
    pts = [(float(i), float(i * i)) for i in range(100)]
    assert envelope(pts, 200) == pts


def test_long_series_is_bounded_and_keeps_the_one_bad_second() -> None:
    rng = random.Random(7)
    pts: list[tuple[float, float | None]] = [(float(t), 100 + rng.random()) for t in range(86_400)]
    pts[51_234] = (51_234.0, 5_000.0)  # one latency spike in a day
    pts[70_000] = (70_000.0, 0.5)  # and one stall
    out = envelope(pts, 2_000)
    assert len(out) <= 2_000
    assert (51_234.0, 5_000.0) in out and (70_000.0, 0.5) in out
    assert [t for t, _ in out] == sorted(t for t, _ in out)
    assert max(v for _, v in out if v is not None) == 5_000.0


def test_gaps_stay_gaps() -> None:
    pts: list[tuple[float, float | None]] = [(float(t), None if 400 <= t < 600 else 1.0)
                                            for t in range(1_000)]
    out = envelope(pts, 100)
    assert any(v is None for _, v in out)
    assert all(v in (None, 1.0) for _, v in out)

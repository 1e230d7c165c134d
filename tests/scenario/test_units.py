import pytest

from assay.scenario.units import (
    UnitError,
    format_duration,
    format_size,
    parse_duration,
    parse_ratio,
    parse_size,
)


@pytest.mark.parametrize("text,expected", [
    ("4k", 4096), ("4K", 4096), ("32KiB", 32768), ("8GiB", 8 << 30), ("1.5g", 3 << 29),
    ("4096", 4096), (4096, 4096), ("1m", 1 << 20), ("2t", 2 << 40),
])
def test_sizes_follow_fio_binary_units(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["4x", "k4", "", "4 kibibytes", "-1", True, -5])
def test_bad_sizes_are_rejected_with_an_example(bad):
    with pytest.raises(UnitError, match="expected a size|cannot be negative"):
        parse_size(bad)


@pytest.mark.parametrize("text,expected", [
    ("500us", 0.0005), ("20ms", 0.02), ("30s", 30), ("10m", 600), ("1h30m", 5400), ("90", 90),
    ("2d", 172800), (15, 15.0),
])
def test_durations(text, expected):
    assert parse_duration(text) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["10 minutes", "m10", "10q", "", "1h 2x"])
def test_bad_durations(bad):
    with pytest.raises(UnitError):
        parse_duration(bad)


def test_ratios():
    assert parse_ratio("2:1") == 2.0
    assert parse_ratio(3) == 3.0
    with pytest.raises(UnitError, match="at least 1"):
        parse_ratio("0.5")


def test_formatting_round_trips_for_humans():
    assert format_size(8 << 30) == "8GiB"
    assert format_size(1536) == "1.5KiB"
    assert format_duration(3723) == "1h02m03s"
    assert format_duration(90) == "1m30s"
    assert format_duration(0.02) == "20ms"

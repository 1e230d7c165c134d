"""Sizing units: decimal means decimal, binary needs the i, fio's bare letters are refused."""

import pytest

from assay.exitcodes import UserError
from assay.sizing import units


@pytest.mark.parametrize("text, value", [
    ("3.84TB", 3_840_000_000_000), ("800MB", 800_000_000), ("75KB", 75_000),
    ("1.92tb", 1_920_000_000_000), ("2GB", 2 * 10**9), ("1PB", 10**15),
    ("3.84TiB", round(3.84 * 2**40)), ("64GiB", 64 << 30), ("4KiB", 4096), ("800MiB", 800 << 20),
    ("4096", 4096), ("4096B", 4096), ("0", 0), (" 12 GB ", 12 * 10**9), (4096, 4096),
])
def test_sizes(text, value):
    assert units.parse_size(text) == value


@pytest.mark.parametrize("text, words", [
    ("4t", "ambiguous"), ("8g", "8GB"), ("2k", "2KiB"), ("lots", "expected a size"),
    ("-1GB", "expected a size"), ("5iB", "expected a size"), (-3, "non-negative"),
])
def test_bad_sizes_say_how_to_write_them(text, words):
    with pytest.raises(UserError, match=words):
        units.parse_size(text)


@pytest.mark.parametrize("text, value", [
    ("25MB/s", 25 * 10**6), ("200MiB/s", 200 << 20), ("200MiB", 200 << 20), ("1.7GB/s", 1.7e9),
    ("100 MBps", 10**8),
])
def test_rates(text, value):
    assert units.parse_rate(text) == value


@pytest.mark.parametrize("text, value", [("1.05M", 1.05e6), ("250k", 250e3), ("1000000", 1e6),
                                         ("4.2m", 4.2e6)])
def test_counts(text, value):
    assert units.parse_count(text) == pytest.approx(value)


def test_count_refuses_other_suffixes():
    with pytest.raises(UserError, match="1.05M"):
        units.parse_count("1G")


def test_format_shows_decimal_with_binary_beside():
    assert units.format_size(3.84e12) == "3.84 TB (3.49 TiB)"
    assert units.format_size(1 << 30, binary=True) == "1.00 GiB"
    assert units.format_size(512) == "512 B"

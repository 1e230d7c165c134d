"""Units for sizing: decimal means decimal.

Drive and mailbox sizes in this field are quoted in decimal units (a "3.84 TB" SSD holds
3.84 x 10^12 bytes), so here TB = 10^12 and MB = 10^6; binary sizes need TiB / MiB. fio's
single letters (`4k`, `8g`) mean 1024-multiples in fio and 1000-multiples to a datasheet, so a
sizer refuses them rather than guess. (Scenarios keep their own parser: scenario/units.py.)
"""

from __future__ import annotations

import math
import re

from assay.exitcodes import UserError

DECIMAL = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15}
BINARY = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
_COUNT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([km]?)\s*$", re.IGNORECASE)

SIZE_HELP = ("decimal: 800MB = 800 x 10^6 bytes, 3.84TB = 3.84 x 10^12; "
             "binary needs MiB/GiB/TiB")


class SizeError(UserError):
    """A size or rate the sizer cannot read; the message says how to write it."""


def parse_size(text: str | int | float) -> int:
    """Bytes from `800MB` (decimal), `64GiB` (binary), `4096` or `4096B` (bytes)."""
    if isinstance(text, bool):
        raise SizeError(f"expected a size such as 800MB or 64GiB, got {text!r}")
    if isinstance(text, int | float):
        if text < 0 or not math.isfinite(text):
            raise SizeError(f"a size must be a non-negative number of bytes, got {text!r}")
        return int(text)
    m = _SIZE.match(text)
    if not m:
        raise SizeError(f"expected a size such as 800MB, 3.84TB or 64GiB, got {text!r}")
    number, prefix, binary, byte = m.groups()
    prefix = prefix.lower()
    if prefix and not (binary or byte):
        raise SizeError(f"{text!r} is ambiguous: write {number}{prefix.upper()}B (decimal, "
                        f"10^{_exp(prefix)} bytes) or {number}{prefix.upper()}iB (binary)")
    if binary and not prefix:
        raise SizeError(f"expected a size such as 800MB or 64GiB, got {text!r}")
    mult = BINARY[prefix] if binary else DECIMAL[prefix]
    return round(float(number) * mult)


def parse_rate(text: str | int | float) -> int:
    """Bytes per second from `25MB/s`, `200MiB/s` or a size (`200MiB` = per second)."""
    if isinstance(text, str):
        text = re.sub(r"\s*(/\s*s|ps)\s*$", "", text.strip(), flags=re.IGNORECASE)
    return parse_size(text)


def parse_count(text: str | int | float) -> float:
    """A plain count that may carry k (10^3) or M (10^6): `1.05M` transactions per minute."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    m = _COUNT.match(str(text))
    if not m:
        raise SizeError(f"expected a number such as 1000000, 1.05M or 250k, got {text!r}")
    return float(m.group(1)) * DECIMAL[m.group(2).lower()]


def _exp(prefix: str) -> int:
    return round(math.log10(DECIMAL[prefix]))


def format_size(n: float, binary: bool = False) -> str:
    """`16.00 TB (14.55 TiB)`: decimal first, as drives and quotas are quoted, with the binary
    figure beside it; `binary=True` prints only the binary form (memory, which is binary)."""
    b = _scaled(n, (("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20),
                    ("KiB", 1 << 10)))
    if binary:
        return b
    d = _scaled(n, (("PB", 10**15), ("TB", 10**12), ("GB", 10**9), ("MB", 10**6),
                    ("kB", 10**3)))
    return d if d == b else f"{d} ({b})"


def _scaled(n: float, table: tuple[tuple[str, int], ...]) -> str:
    for unit, mult in table:
        if abs(n) >= mult:
            return f"{n / mult:,.2f} {unit}"
    return f"{n:.0f} B"

"""Units as fio writes them: sizes (`4k`, `8GiB`), durations (`10m`, `500us`), rates.

fio's default `kb_base=1024` makes `k`, `KB` and `KiB` all 1024; we follow fio so that a size
means the same thing in a scenario and in the job file it becomes.
"""

from __future__ import annotations

import re

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_SIZE_MULT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}

_DUR_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(us|µs|ms|s|m|h|d)", re.IGNORECASE)
_DUR_MULT = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class UnitError(ValueError):
    """A value that is not in the expected unit; the message says what was expected."""


def parse_size(value: str | int | float) -> int:
    """Bytes from `4096`, `4k`, `8GiB`, `1.5g`."""
    if isinstance(value, bool):
        raise UnitError(f"expected a size such as 4k or 8GiB, got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise UnitError(f"a size cannot be negative: {value}")
        return int(value)
    m = _SIZE_RE.match(str(value))
    if not m or (m.group(3).lower() == "i"):
        raise UnitError(f"expected a size such as 4k, 32KiB or 8GiB, got {value!r}")
    return int(float(m.group(1)) * _SIZE_MULT[m.group(2).lower()])


def parse_duration(value: str | int | float) -> float:
    """Seconds from `90`, `90s`, `10m`, `1h30m`, `500us`. A bare number is seconds."""
    if isinstance(value, bool):
        raise UnitError(f"expected a duration such as 30s or 10m, got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise UnitError(f"a duration cannot be negative: {value}")
        return float(value)
    text = str(value).strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    pos, total = 0, 0.0
    for m in _DUR_RE.finditer(text):
        if m.start() != pos and text[pos : m.start()].strip():
            break
        total += float(m.group(1)) * _DUR_MULT[m.group(2).lower()]
        pos = m.end()
    if pos == 0 or text[pos:].strip():
        raise UnitError(f"expected a duration such as 500us, 20ms, 30s, 10m or 1h, got {value!r}")
    return total


def parse_ratio(value: str | int | float) -> float:
    """A ratio such as `2`, `2.5`, `2:1` (compression, dedupe) — at least 1."""
    if isinstance(value, bool):
        raise UnitError(f"expected a ratio such as 2 or 2:1, got {value!r}")
    text = str(value).strip()
    try:
        if ":" in text:
            a, b = text.split(":", 1)
            r = float(a) / float(b)
        else:
            r = float(text)
    except (ValueError, ZeroDivisionError):
        raise UnitError(f"expected a ratio such as 2 or 2:1, got {value!r}") from None
    if r < 1.0:
        raise UnitError(f"a data-reduction ratio is at least 1 (1 = incompressible), got {value!r}")
    return r


def parse_percent(value: str | int | float) -> float:
    """`60` or `60%`: a bare number is a percentage, as in fio."""
    text = str(value).strip().rstrip("%")
    try:
        p = float(text)
    except ValueError:
        raise UnitError(f"expected a percentage such as 60 or 60%, got {value!r}") from None
    if not 0 <= p <= 100:
        raise UnitError(f"a percentage is between 0 and 100, got {value!r}")
    return p


def format_size(n: float) -> str:
    """Human size in the binary units fio prints (`4KiB`, `1.5GiB`)."""
    for unit, mult in (("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20),
                       ("KiB", 1 << 10)):
        if n >= mult:
            v = n / mult
            return f"{v:.0f}{unit}" if v == int(v) else f"{v:.1f}{unit}"
    return f"{n:.0f}B"


def format_duration(seconds: float) -> str:
    """`1h02m`, `5m30s`, `45s`, `20ms`, `500us`."""
    if seconds <= 0:
        return "0s"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f}us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g}ms"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m" if not sec else f"{h}h{m:02d}m{sec:02d}s"
    if m:
        return f"{m}m{sec:02d}s" if sec else f"{m}m"
    return f"{sec}s"


def format_latency_ms(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms < 1:
        return f"{ms * 1000:.0f}us"
    if ms < 100:
        return f"{ms:.2f}ms"
    return f"{ms:.0f}ms"

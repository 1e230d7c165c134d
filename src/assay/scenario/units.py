"""Units as fio writes them: sizes (`4k`, `8GiB`), durations (`10m`, `500us`), rates.

Sizes follow the SI and IEC standards, which is how fio prints them and how it reads them
with `kb_base=1000`: `KiB`…`PiB` are powers of 1024, `kB`/`KB`…`PB` powers of 1000, and a
bare prefix (`4k`, `8g`) is a power of 1024 as in every fio job file. fio's default
`kb_base=1024` reads `8GB` as 8 GiB and `8GiB` as 8·10⁹; assay never hands a unit to fio
(job files get bytes), so the scenario's meaning is the one that counts.
"""

from __future__ import annotations

import math
import re

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:([kmgtp])(i?)(b?))?\s*(b?)\s*$", re.IGNORECASE)
_POWER = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
MAX_SIZE = 1 << 60  # 1 EiB: beyond any real dataset, well inside fio's 64-bit sizes

_DUR_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(us|µs|ms|s|m|h|d)", re.IGNORECASE)
_DUR_MULT = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
MAX_DURATION = 30 * 86400.0  # 30 days: longer is a typo, and fio's timers are not tested there


class UnitError(ValueError):
    """A value that is not in the expected unit; the message says what was expected."""


def _show(value: object) -> str:
    """The offending value for a message, cut short: a 5000-digit number is not readable."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _as_float(value: int | float) -> float:
    """A YAML number as a float; an int too big for one becomes infinity, not OverflowError."""
    return float(max(min(value, 1 << 1000), -(1 << 1000))) if isinstance(value, int) else value


def parse_size(value: str | int | float) -> int:
    """Bytes from `4096`, `4k`, `8GiB`, `1.5g` (binary) or `8GB`, `8 GB` (decimal)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UnitError(f"expected a size such as 4k or 8GiB, got {_show(value)}")
    if isinstance(value, int | float):
        number = _as_float(value)
    else:
        m = _SIZE_RE.match(value)
        # `4ki` (fio: 4000 or 4096 by kb_base) and `4k b` are refused, not guessed
        if not m or (m.group(3) and not m.group(4)) or (m.group(2) and m.group(5)):
            raise UnitError(f"expected a size such as 4k, 32KiB, 8GiB or 8GB, got {_show(value)}")
        prefix, binary, byte = (m.group(2) or "").lower(), m.group(3), m.group(4)
        base = 1000 if prefix and byte and not binary else 1024  # kB..PB are SI, the rest binary
        number = float(m.group(1)) * base ** _POWER.get(prefix, 0)
    if not math.isfinite(number) or number < 0:
        raise UnitError(f"a size cannot be negative: {_show(value)}" if number < 0 else
                        f"expected a size such as 4k or 8GiB, got {_show(value)}")
    if number > MAX_SIZE:
        raise UnitError(f"a size is at most 1EiB, got {_show(value)}")
    return int(number)


def parse_duration(value: str | int | float) -> float:
    """Seconds from `90`, `90s`, `10m`, `1h30m`, `500us`. A bare number is seconds."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UnitError(f"expected a duration such as 30s or 10m, got {_show(value)}")
    total = _as_float(value) if isinstance(value, int | float) else _duration_text(value)
    if not math.isfinite(total) or total < 0:
        raise UnitError(f"a duration cannot be negative: {_show(value)}" if total < 0 else
                        f"expected a duration such as 30s or 10m, got {_show(value)}")
    if total > MAX_DURATION:
        raise UnitError(f"a duration is at most 30d, got {_show(value)}")
    return total


def _duration_text(value: str) -> float:
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    pos, total = 0, 0.0
    for m in _DUR_RE.finditer(text):
        if m.start() != pos and text[pos : m.start()].strip():
            break
        total += float(m.group(1)) * _DUR_MULT[m.group(2).lower()]
        pos = m.end()
    if pos == 0 or text[pos:].strip():
        raise UnitError(f"expected a duration such as 500us, 20ms, 30s, 10m or 1h, "
                        f"got {_show(value)}")
    return total


def parse_ratio(value: str | int | float) -> float:
    """A ratio such as `2`, `2.5`, `2:1` (compression, dedupe) — at least 1."""
    if isinstance(value, bool):
        raise UnitError(f"expected a ratio such as 2 or 2:1, got {_show(value)}")
    text = str(value).strip()
    try:
        if ":" in text:
            a, b = text.split(":", 1)
            r = float(a) / float(b)
        else:
            r = float(text)
    except (ValueError, ZeroDivisionError):
        raise UnitError(f"expected a ratio such as 2 or 2:1, got {_show(value)}") from None
    if not math.isfinite(r):
        raise UnitError(f"expected a ratio such as 2 or 2:1, got {_show(value)}")
    if r < 1.0:
        raise UnitError(f"a data-reduction ratio is at least 1 (1 = incompressible), "
                        f"got {_show(value)}")
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

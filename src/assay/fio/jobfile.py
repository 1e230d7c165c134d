"""fio job files: what assay runs is always a plain job file the user can read and rerun.

fio reads numbers its own way, and a value that looks right can mean something else:
`runtime=1.03681e+06s` is about one second and `runtime=1.5s` is one (fio truncates the
fraction). `render` therefore writes every number in plain notation and every time with a
suffix as a whole number of seconds, milliseconds or microseconds, whoever built the options.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal

Options = dict[str, str | int | float | bool | None]

_NUM = r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_TIME = re.compile(rf"({_NUM})\s*(s|sec|ms|msec|us|usec)", re.IGNORECASE)
_SCIENTIFIC = re.compile(r"(?<![\w.])(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+(?![\d.])")
_TIME_SCALE = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "msec": 1e-3, "us": 1e-6, "usec": 1e-6}
# options whose bare numbers are seconds (fio's default unit for these)
_SECONDS_KEYS = {"runtime", "startdelay", "ramp_time"}
# options holding paths or free text: numbers in them are not ours to rewrite
_TEXT_KEYS = {"filename", "directory", "description", "name", "ioengine", "filename_format",
              "exec_prerun", "exec_postrun", "opendir", "read_iolog", "write_iolog"}


@dataclass
class FioJob:
    name: str
    options: Options = field(default_factory=dict)


def plain_number(x: float) -> str:
    """`1036810`, `0.0005`: never `1.03681e+06`, which fio misreads."""
    if not math.isfinite(x):
        raise ValueError(f"fio has no notation for {x!r}")
    if x == int(x):
        return str(int(x))
    text = format(Decimal(repr(x)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def fio_seconds(seconds: float) -> str:
    """A time for fio: whole seconds, else whole milliseconds or microseconds (never a
    fraction, which fio drops; never 0 for a positive time, which fio reads as no limit)."""
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a time fio can run for: {seconds!r}")
    us = max(round(seconds * 1_000_000), 1 if seconds > 0 else 0)
    if us % 1_000_000 == 0:
        return f"{us // 1_000_000}s"
    return f"{us // 1000}ms" if us % 1000 == 0 else f"{us}us"


def _value(key: str, value: str | int | float) -> str:
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return fio_seconds(value) if key in _SECONDS_KEYS else plain_number(value)
    if key in _TEXT_KEYS:
        return value
    m = _TIME.fullmatch(value.strip())
    if m:
        return fio_seconds(float(m.group(1)) * _TIME_SCALE[m.group(2).lower()])
    if key in _SECONDS_KEYS and re.fullmatch(_NUM, value.strip()):
        return fio_seconds(float(value))
    return _SCIENTIFIC.sub(lambda n: plain_number(float(n.group(0))), value)


def _line(key: str, value: str | int | float | bool | None) -> str | None:
    if value is None or value is False:
        return None
    if value is True:
        return key
    text = _value(key, value)
    bad = _unsafe(text)
    if bad:  # fio would cut the line short or start a new one: never write what fio misreads
        raise ValueError(f"fio option {key}={text!r}: {bad}")
    return f"{key}={text}"


def _unsafe(text: str) -> str | None:
    if ";" in text or "#" in text:
        return "fio reads ; and # as the start of a comment"
    # isprintable() is False for every control character: the character walk only for the
    # rare value it refuses (an option per line of a 1,024-host plan's job files)
    if not text.isprintable() and any(unicodedata.category(c) == "Cc" for c in text):
        return "control characters (a newline, a tab) do not survive a job file"
    return None


def render(global_options: Options, jobs: list[FioJob], header: str = "") -> str:
    """Render a job file; `None`/`False` options are left out, `True` is a bare flag."""
    out = [f"; {h}" for h in header.splitlines()] if header else []
    sections = [("global", global_options)] + [(j.name, j.options) for j in jobs]
    for name, opts in sections:
        if "]" in name or _unsafe(name):
            raise ValueError(f"fio job name {name!r}")
        out.append(f"[{name}]")
        out.extend(line for k, v in opts.items() if (line := _line(k, v)) is not None)
        out.append("")
    return "\n".join(out)

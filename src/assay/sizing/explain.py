"""Numbers that carry their own explanation.

Every figure the sizer prints is a `Figure`: its value, unit, the formula that produced it, the
inputs that went into that formula and where the rule comes from. `--explain` and `--json` are
two renderings of the same objects, so the explanation can never drift from the number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from assay.sizing.units import format_size


class Bytes(float):
    """An input that is a number of bytes: --explain prints `16.00 TB (14.55 TiB)`, JSON a
    number."""


class BinBytes(Bytes):
    """Bytes of memory: --explain prints them binary only (`128.00 GiB`), as DIMMs are sold."""


class Rate(float):
    """An input in bytes per second."""


@dataclass(frozen=True)
class Figure:
    """One computed number with the formula, inputs and source behind it."""

    label: str
    value: float
    unit: str
    formula: str
    inputs: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    binary: bool = False  # a memory size: printed in GiB only

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "value": self.value,
            "unit": self.unit,
            "formula": self.formula,
            "inputs": {k: _plain(v) for k, v in self.inputs.items()},
            "source": self.source,
        }


def _plain(v: Any) -> Any:
    """Inputs that are themselves figures appear in JSON as their value."""
    if isinstance(v, Figure):
        return v.value
    return float(v) if isinstance(v, float) else v


def clean_numbers(v: Any) -> Any:
    """JSON without float artifacts: 15 significant digits (4040.0000000000005 -> 4040),
    whole numbers as integers, and infinities (nothing left after a failure) as null."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        r = float(f"{v:.15g}")
        return int(r) if r.is_integer() and abs(r) < 2**53 else r
    if isinstance(v, dict):
        return {k: clean_numbers(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [clean_numbers(x) for x in v]
    return v


@dataclass(frozen=True)
class Check:
    """One design rule: does the design hold it, and if not, by how much does it miss."""

    rule: str
    ok: bool
    actual: float
    limit: float
    unit: str
    message: str
    source: str = ""

    @property
    def over_by(self) -> float:
        """How far the actual figure is on the wrong side of the limit (0 when it passes)."""
        return 0.0 if self.ok else abs(self.actual - self.limit)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "ok": self.ok,
            "actual": self.actual,
            "limit": self.limit,
            "unit": self.unit,
            "over_by": self.over_by,
            "message": self.message,
            "source": self.source,
        }


def at_most(rule: str, actual: float, limit: float, unit: str, what: str,
            source: str = "", binary: bool = False) -> Check:
    """A ceiling rule, e.g. "CPU in the worst failure mode <= 80 %"."""
    ok = actual <= limit + 1e-9
    a, lim = fmt(actual, unit, binary), fmt(limit, unit, binary)
    if ok:
        msg = f"{what} {a} is within the limit of {lim}"
    else:
        msg = f"{what} {a} exceeds the limit of {lim} by {fmt(actual - limit, unit, binary)}"
    return Check(rule, ok, actual, limit, unit, msg, source)


def at_least(rule: str, actual: float, limit: float, unit: str, what: str,
             source: str = "", binary: bool = False) -> Check:
    """A floor rule, e.g. "nodes >= 7 for RF3 self-healing from two failures"."""
    ok = actual >= limit - 1e-9
    a, lim = fmt(actual, unit, binary), fmt(limit, unit, binary)
    if ok:
        msg = f"{what} {a} meets the minimum of {lim}"
    else:
        msg = f"{what} {a} is below the minimum of {lim} by {fmt(limit - actual, unit, binary)}"
    return Check(rule, ok, actual, limit, unit, msg, source)


@dataclass(frozen=True)
class SideBySide:
    """Figures shown next to each other, e.g. the Jetstress target in normal operation and at
    N-1: each row names one figure key per column."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]  # (row label, figure key per column)
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "columns": list(self.columns), "source": self.source,
                "rows": [{"label": label, "figures": list(keys)} for label, keys in self.rows]}


@dataclass
class Result:
    """Everything one `assay size ...` computes: figures, design-rule checks, caveats."""

    kind: str
    inputs: dict[str, Any]
    figures: dict[str, Figure] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    demand: dict[str, Any] = field(default_factory=dict)
    views: list[SideBySide] = field(default_factory=list)

    def add(self, key: str, figure: Figure) -> Figure:
        self.figures[key] = figure
        return figure

    def value(self, key: str) -> float:
        return self.figures[key].value

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_json(self) -> dict[str, Any]:
        return clean_numbers({
            "schema_version": 1,
            "kind": self.kind,
            "inputs": self.inputs,
            "figures": {k: f.to_json() for k, f in self.figures.items()},
            "checks": [c.to_json() for c in self.checks],
            "passed": not self.failed,
            "demand": self.demand,
            "views": [v.to_json() for v in self.views],
            "notes": self.notes,
        })


def round_half_up(x: float, digits: int) -> float:
    """Round as a spreadsheet does (0.0335 -> 0.034), the way the published tables are rounded."""
    q = Decimal(1).scaleb(-digits)
    return float(Decimal(repr(x)).quantize(q, rounding=ROUND_HALF_UP))


def ceil_div(a: float, b: float) -> int:
    """ceil(a / b) that is not fooled by float noise (3.0000000001 stays 3)."""
    return math.ceil(a / b - 1e-9)


def floor_div(a: float, b: float) -> int:
    """floor(a / b) that is not fooled by float noise (2.9999999999 stays 3)."""
    return math.floor(a / b + 1e-9)


KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
TIB = 1 << 40
KB, MB, GB, TB = 10**3, 10**6, 10**9, 10**12  # drives, quotas and throughput are decimal


def fmt(value: float, unit: str, binary: bool = False) -> str:
    """A value with its unit, in the units a storage engineer reads: storage bytes decimal
    with the binary figure beside them, memory binary."""
    if unit == "bytes":
        return format_size(value, binary)
    if unit == "nines":
        return f"{value:.1f} nines"
    if unit == "%":
        if 99 < value < 100:  # availability: show the digits up to the first non-9
            return f"{value:.{min(12, math.ceil(-math.log10(100 - value) - 1e-9))}f} %"
        return f"{value:.1f} %"
    if unit == "1/yr":
        return f"{value:.2g} /yr"
    if unit in ("", "x"):
        return f"{value:.3g}{unit}"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,} {unit}"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    if abs(value) >= 1:
        return f"{value:,.2f} {unit}"
    return f"{value:.3g} {unit}"




def describe_inputs(figure: Figure) -> str:
    """`a = 1, b = 2 GiB` for the explanation line."""
    parts = []
    for k, v in figure.inputs.items():
        if isinstance(v, Figure):
            parts.append(f"{k} = {fmt(v.value, v.unit, v.binary)}")
        elif isinstance(v, Rate):
            parts.append(f"{k} = {v / 1e6:,.4g} MB/s")
        elif isinstance(v, Bytes):
            parts.append(f"{k} = {format_size(v, isinstance(v, BinBytes))}")
        elif isinstance(v, float):
            parts.append(f"{k} = {v:.6g}")
        else:
            parts.append(f"{k} = {v}")
    return ", ".join(parts)

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


class Bytes(float):
    """An input that is a number of bytes: --explain prints it as GiB/TiB, JSON as a number."""


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
            source: str = "") -> Check:
    """A ceiling rule, e.g. "CPU in the worst failure mode <= 80 %"."""
    ok = actual <= limit + 1e-9
    if ok:
        msg = f"{what} {fmt(actual, unit)} is within the limit of {fmt(limit, unit)}"
    else:
        msg = (f"{what} {fmt(actual, unit)} exceeds the limit of {fmt(limit, unit)} "
               f"by {fmt(actual - limit, unit)}")
    return Check(rule, ok, actual, limit, unit, msg, source)


def at_least(rule: str, actual: float, limit: float, unit: str, what: str,
             source: str = "") -> Check:
    """A floor rule, e.g. "nodes >= 7 for RF3 self-healing from two failures"."""
    ok = actual >= limit - 1e-9
    if ok:
        msg = f"{what} {fmt(actual, unit)} meets the minimum of {fmt(limit, unit)}"
    else:
        msg = (f"{what} {fmt(actual, unit)} is below the minimum of {fmt(limit, unit)} "
               f"by {fmt(limit - actual, unit)}")
    return Check(rule, ok, actual, limit, unit, msg, source)


@dataclass
class Result:
    """Everything one `assay size ...` computes: figures, design-rule checks, caveats."""

    kind: str
    inputs: dict[str, Any]
    figures: dict[str, Figure] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    demand: dict[str, Any] = field(default_factory=dict)

    def add(self, key: str, figure: Figure) -> Figure:
        self.figures[key] = figure
        return figure

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "kind": self.kind,
            "inputs": self.inputs,
            "figures": {k: f.to_json() for k, f in self.figures.items()},
            "checks": [c.to_json() for c in self.checks],
            "passed": not self.failed,
            "demand": self.demand,
            "notes": self.notes,
        }


def round_half_up(x: float, digits: int) -> float:
    """Round as a spreadsheet does (0.0335 -> 0.034), the way the published tables are rounded."""
    q = Decimal(1).scaleb(-digits)
    return float(Decimal(repr(x)).quantize(q, rounding=ROUND_HALF_UP))


def ceil_div(a: float, b: float) -> int:
    """ceil(a / b) that is not fooled by float noise (3.0000000001 stays 3)."""
    return math.ceil(a / b - 1e-9)


KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
TIB = 1 << 40


def fmt(value: float, unit: str) -> str:
    """A value with its unit, in the units a storage engineer reads (bytes as GiB/TiB)."""
    if unit == "bytes":
        return format_bytes(value)
    if unit == "%":
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


def format_bytes(n: float) -> str:
    """Binary units with two decimals: 11.33 TiB, 29.30 GiB."""
    for unit, mult in (("PiB", 1 << 50), ("TiB", TIB), ("GiB", GIB), ("MiB", 1 << 20),
                       ("KiB", 1 << 10)):
        if abs(n) >= mult:
            return f"{n / mult:,.2f} {unit}"
    return f"{n:.0f} B"


def describe_inputs(figure: Figure) -> str:
    """`a = 1, b = 2 GiB` for the explanation line."""
    parts = []
    for k, v in figure.inputs.items():
        if isinstance(v, Figure):
            parts.append(f"{k} = {fmt(v.value, v.unit)}")
        elif isinstance(v, Rate):
            parts.append(f"{k} = {format_bytes(v)}/s")
        elif isinstance(v, Bytes):
            parts.append(f"{k} = {format_bytes(v)}")
        elif isinstance(v, float):
            parts.append(f"{k} = {v:.6g}")
        else:
            parts.append(f"{k} = {v}")
    return ", ".join(parts)

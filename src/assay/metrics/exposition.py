"""Metric families in Prometheus' text exposition formats: OpenMetrics 1.0.0 and the older
text format 0.0.4 (what `promtool check metrics` and plain `curl` read).

One model, two renderings. The differences that matter here: OpenMetrics names a counter's
family without `_total` (its samples carry it), has `# UNIT`, takes timestamps in seconds and
ends with `# EOF`; text 0.0.4 names the family as its samples are named and takes timestamps
in milliseconds. Label values are escaped the same way in both (backslash, quote, newline).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
TEXT = "text/plain; version=0.0.4; charset=utf-8"
KINDS = ("gauge", "counter", "summary", "info", "unknown")

Labels = Mapping[str, str]


@dataclass
class Point:
    labels: dict[str, str]
    value: float
    suffix: str = ""  # `_total`, `_sum`, `_count`, `_info` (the sample's name after the family)
    timestamp: float | None = None  # seconds since the epoch


@dataclass
class Family:
    name: str  # without `_total` for a counter, without `_info` for an info
    kind: str
    help: str
    unit: str = ""  # OpenMetrics: a suffix of the name (`seconds`, `bytes`, `ratio`)
    points: list[Point] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"metric kind {self.kind!r}")
        if self.unit and not self.name.endswith(f"_{self.unit}"):
            raise ValueError(f"{self.name}: the unit {self.unit!r} must end the name")

    def add(self, value: float | None, labels: Labels | None = None, *, suffix: str | None = None,
            timestamp: float | None = None) -> None:
        """One sample; a missing value (None, NaN) is left out rather than exposed as NaN."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return
        if suffix is None:
            suffix = {"counter": "_total", "info": "_info"}.get(self.kind, "")
        self.points.append(Point(dict(labels or {}), float(value), suffix, timestamp))


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def number(v: float) -> str:
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{escape(str(v))}"' for k, v in labels.items()) + "}"


def render(families: Iterable[Family], openmetrics: bool = True) -> str:
    """The exposition text. Families without points are left out (a family must not be
    empty in OpenMetrics' eyes only when it has metadata alone; leaving it out is simplest)."""
    out: list[str] = []
    for f in families:
        if not f.points:
            continue
        name = f.name
        kind = f.kind
        if not openmetrics:  # 0.0.4: the family is named as its samples are; no info type
            if kind == "counter":
                name = f"{f.name}_total"
            elif kind == "info":
                name, kind = f"{f.name}_info", "gauge"
        out.append(f"# HELP {name} {escape(f.help)}")
        out.append(f"# TYPE {name} {kind}")
        if openmetrics and f.unit:
            out.append(f"# UNIT {name} {f.unit}")
        for p in f.points:
            line = f"{f.name}{p.suffix}{_labels(p.labels)} {number(p.value)}"
            if p.timestamp is not None:
                ts = p.timestamp if openmetrics else p.timestamp * 1000
                line += f" {number(round(ts, 3))}"
            out.append(line)
    if openmetrics:
        out.append("# EOF")
    return "\n".join(out) + "\n"


def wants_openmetrics(accept: str | None) -> bool:
    """Content negotiation as Prometheus does it: OpenMetrics when the scraper asks for it."""
    return "application/openmetrics-text" in (accept or "")

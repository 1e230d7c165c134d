"""Threshold grammar.

    threshold := selector OP value
    selector  := [workload "."] [stream "."] [direction "."] metric
    OP        := "<" | "<=" | ">" | ">=" | "==" | "!="
    value     := number [unit] | [number "%"] "target"

Examples: `db.data.read.lat_p99 < 20ms`, `mail.db.iops >= target`, `iops >= 95% target`,
`log.write.lat_avg <= 10ms`, `mbps > 500`. Latency values take a unit (us, ms, s). A selector
with fewer parts applies to every component it matches, and each must hold.

In a scenario, `thresholds` is a mapping `selector: "OP value"` or `workload: preset`, or a
list of threshold strings.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

# metric -> (unit shown, kind of value) ; latencies are compared in ms
METRICS: dict[str, str] = {
    "iops": "IO/s achieved over the measured window",
    "mbps": "MB/s (10^6 bytes) over the measured window",
    "lat_avg": "mean latency, submit to completion",
    "lat_p50": "median latency from the merged histogram",
    "lat_p95": "95th percentile latency from the merged histogram",
    "lat_p99": "99th percentile latency from the merged histogram",
    "lat_p999": "99.9th percentile latency from the merged histogram",
    "lat_max": "largest latency seen",
    "behind": "seconds the component fell behind its fixed-rate schedule (max)",
}
LATENCY = {m for m in METRICS if m.startswith("lat_")}

OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, ">": operator.gt,
}

_EXPR = re.compile(r"^\s*(?P<sel>[A-Za-z0-9_.\-]+)\s*(?P<op><=|>=|==|!=|<|>)\s*(?P<val>.+?)\s*$")
_VALUE = re.compile(r"^(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>us|µs|ms|s|%)?$")
_TARGET = re.compile(r"^(?:(?P<pct>\d+(?:\.\d+)?)\s*%\s*(?:of\s+)?)?target$")
_UNIT_MS = {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0}


class ThresholdError(ValueError):
    pass


@dataclass(frozen=True)
class Threshold:
    selector: tuple[str, ...]  # the parts before the metric
    metric: str
    op: str
    value: float | None  # in ms for latencies; None when comparing with the target
    target_fraction: float | None = None  # `95% target` -> 0.95
    text: str = ""
    source: str = ""  # "preset jetstress-strict" when it came from a preset

    @property
    def expr(self) -> str:
        return self.text

    def holds(self, observed: float, bound: float) -> bool:
        return OPS[self.op](observed, bound)


def parse(text: str, source: str = "") -> Threshold:
    m = _EXPR.match(text)
    if not m:
        raise ThresholdError(f"cannot read {text!r}: expected `selector OP value`, "
                             f"e.g. `db.data.read.lat_p99 < 20ms`")
    parts = m["sel"].split(".")
    metric = parts[-1]
    if metric not in METRICS:
        raise ThresholdError(f"unknown metric {metric!r} in {text!r} "
                             f"(known: {', '.join(METRICS)})")
    raw = m["val"].strip()
    t = _TARGET.match(raw)
    if t:
        if metric not in ("iops", "mbps"):
            raise ThresholdError(f"{text!r}: only iops and mbps compare with `target`")
        frac = float(t["pct"]) / 100 if t["pct"] else 1.0
        return Threshold(tuple(parts[:-1]), metric, m["op"], None, frac, _norm(m), source)
    v = _VALUE.match(raw)
    if not v:
        raise ThresholdError(f"{text!r}: cannot read the value {raw!r}")
    num, unit = float(v["num"]), v["unit"]
    if metric in LATENCY:
        if unit not in _UNIT_MS:
            raise ThresholdError(f"{text!r}: a latency needs a unit (us, ms or s), e.g. 20ms")
        num *= _UNIT_MS[unit]
    elif unit:
        raise ThresholdError(f"{text!r}: {metric} takes a plain number, not {unit!r}")
    return Threshold(tuple(parts[:-1]), metric, m["op"], num, None, _norm(m), source)


def _norm(m: re.Match[str]) -> str:
    return f"{m['sel']} {m['op']} {m['val'].strip()}"

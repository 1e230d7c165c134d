"""Threshold grammar.

    threshold := selector OP value [phase] | selector "in band" [phase]
    selector  := [workload "."] [stream "."] [direction "."] metric | "host" ["." name] "." metric
    OP        := "<" | "<=" | ">" | ">=" | "==" | "!="
    value     := number [unit] | [number "%"] "target"
    phase     := "before" | "between" | "after" [step] | "during" [step]

Examples: `db.data.read.lat_p99 < 20ms`, `mail.db.iops >= target`, `iops >= 95% target`,
`log.write.lat_avg <= 10ms`, `mbps > 500`. Latency values take a unit (us, ms, s). A selector
with fewer parts applies to every component it matches, and each must hold.

A trailing phase grades only part of the run, cut at the timeline's events (metrics/phases.py):
`db.data.write.lat_p99 < 50ms during snapshot` (the seconds of every `snapshot` step, by step
name or action), `db.data.read.iops >= 95% target after`, `lat_p99 < 20ms before`. The
`recovery` metric is the longest time (seconds) a component took after an event to get back
near its `before` level: `db.data.read.recovery <= 30` or `recovery <= 30s after replace`.

`SELECTOR in band` holds when the value lies in X-Ray's 95 % Poisson band around the target,
target ± 1.96·√target (e.g. `db.iops_median in band`). A stream selector names a family too:
`db` matches an Exchange server's per-database streams `db1`, `db2`, ...

`host.METRIC` grades the utilisation of every host of the run (`host.cpu_pct < 80`),
`host.NAME.METRIC` one host: the mean over the measured window, or with `_max` the largest
1 s sample (`host.cpu_pct_max < 95`).

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
    "lat_max": "largest latency seen (the single slowest IO)",
    "lat_max_sample": "largest 15 s average latency (Jetstress' performance-counter samples)",
    "lat_avg_median": "median of the 1 s average latencies (X-Ray's latency charts)",
    "iops_median": "median of the 1 s IOPS samples (X-Ray's IOPS charts)",
    "lat_intended_p99": "99th percentile latency from each IO's due time (even fixed rate)",
    "lat_intended_max": "largest latency from each IO's due time (even fixed rate)",
    "behind": "seconds the component fell behind its fixed-rate schedule (max)",
    "recovery": "seconds after a timeline event until IOPS and latency are back near before",
    # database workloads (kind postgres): read from their `tx` (or `new_order`) components
    "tps": "transactions committed per second over the measured window",
    "tpm": "transactions committed per minute (all types of the mix)",
    "nopm": "new-order transactions committed per minute (the TPC-C-like mix)",
    "failed": "transactions that failed or were skipped past the latency limit (count)",
    # AI training (kind ai-training): its simulated accelerators, read from its `data` reads
    "au": "accelerator utilisation, percent: compute time / run time (`au >= target`: the "
          "model's MLPerf Storage pass level)",
    "au_min": "the lowest 1 s accelerator utilisation, percent",
    "samples_s": "training samples computed per second, all accelerators of the host",
    "batch_wait_p50": "median time a batch waited for its data (the accelerator's view)",
    "batch_wait_p99": "99th percentile time a batch waited for its data",
    # checkpoints (kind checkpoint)
    "save_s": "seconds to write the checkpoint, first write to the last stream's fsync",
    "restore_s": "seconds to read the checkpoint back",
    "save_gbps": "checkpoint write GB/s (10^9 bytes) while saving",
    "restore_gbps": "checkpoint read GB/s (10^9 bytes) while restoring",
}
HOST_METRICS: dict[str, str] = {
    "cpu_pct": "host CPU busy (user + system), percent",
    "cpu_user_pct": "host CPU in user mode, percent",
    "cpu_system_pct": "host CPU in the kernel (system, irq, softirq), percent",
    "cpu_iowait_pct": "host CPU idle waiting for IO, percent",
    "mem_used_pct": "host memory in use (not available), percent",
    "net_rx_mbps": "host network received, all NICs, MB/s",
    "net_tx_mbps": "host network sent, all NICs, MB/s",
}
INTEGRITY_METRICS: dict[str, str] = {
    "lost": "blocks with no valid block where an acknowledged write should be (worst pass)",
    "stale": "blocks holding an older generation than acknowledged (worst pass)",
    "corrupt": "blocks whose checksum or address is wrong (worst pass)",
    "unreadable": "blocks the verify pass could not read (EIO; worst pass)",
}
INTEGRITY = "integrity"  # the selector of integrity-mode thresholds (docs/integrity.md)
HOST = "host"  # the selector of host thresholds (a workload cannot be graded under this name)
PHASES = ("before", "during", "between", "after")
LATENCY = {m for m in METRICS if m.startswith("lat_")} | {"batch_wait_p50", "batch_wait_p99"}
PERCENT = {"au", "au_min"}  # `au >= 90%` or `au >= 90`
SECONDS = {"recovery", "save_s", "restore_s"}  # `save_s < 60s` or `save_s < 60`

OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, ">": operator.gt,
}

_BAND = re.compile(r"^\s*(?P<sel>[A-Za-z0-9_.\-]+)\s+in\s+band\s*$")
_EXPR = re.compile(r"^\s*(?P<sel>[A-Za-z0-9_.\-]+)\s*(?P<op><=|>=|==|!=|<|>)\s*(?P<val>.+?)\s*$")
_VALUE = re.compile(r"^(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>us|µs|ms|s|%)?$")
_TARGET = re.compile(r"^(?:(?P<pct>\d+(?:\.\d+)?)\s*%\s*(?:of\s+)?)?target$")
_UNIT_MS = {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0}
_PHASE = re.compile(r"^(?P<rest>.*?\S)\s+(?P<phase>before|during|between|after)"
                    r"(?:\s+(?P<step>[A-Za-z0-9_\-]+))?\s*$")


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
    phase: str | None = None  # "before", "during", "during snapshot", "after replace", ...

    @property
    def phase_kind(self) -> str | None:
        return self.phase.split()[0] if self.phase else None

    @property
    def phase_step(self) -> str | None:
        parts = (self.phase or "").split()
        return parts[1] if len(parts) > 1 else None

    @property
    def expr(self) -> str:
        return self.text

    @property
    def host(self) -> bool:
        """A host utilisation threshold (`host.cpu_pct < 80`)."""
        return bool(self.selector) and self.selector[0] == HOST

    @property
    def integrity(self) -> bool:
        """An integrity-mode threshold (`integrity.corrupt == 0`)."""
        return bool(self.selector) and self.selector[0] == INTEGRITY

    def holds(self, observed: float, bound: float) -> bool:
        return OPS[self.op](observed, bound)


def host_metric(name: str) -> bool:
    return name in HOST_METRICS or (name.endswith("_max") and name[:-4] in HOST_METRICS)


def parse(text: str, source: str = "") -> Threshold:
    p = _PHASE.match(text)
    if p:
        phase = p["phase"] + (f" {p['step']}" if p["step"] else "")
        inner = parse(p["rest"], source)
        if inner.host or inner.integrity:
            raise ThresholdError(f"{text!r}: {inner.selector[0]} thresholds grade the whole run")
        if inner.metric == "recovery" and p["phase"] in ("before", "between"):
            raise ThresholdError(f"{text!r}: recovery is measured after events; use "
                                 f"`after [STEP]` or no phase")
        if p["step"] and p["phase"] in ("before", "between"):
            raise ThresholdError(f"{text!r}: only `during` and `after` take a step name")
        return Threshold(inner.selector, inner.metric, inner.op, inner.value,
                         inner.target_fraction, f"{inner.text} {phase}", source, phase)
    b = _BAND.match(text)
    if b:
        parts = b["sel"].split(".")
        if parts[-1] not in ("iops", "iops_median"):
            raise ThresholdError(f"{text!r}: only iops and iops_median lie in a band (X-Ray's "
                                 f"target ± 1.96·√target)")
        return Threshold(tuple(parts[:-1]), parts[-1], "in", None, 1.0,
                         f"{b['sel']} in band", source)
    m = _EXPR.match(text)
    if not m:
        raise ThresholdError(f"cannot read {text!r}: expected `selector OP value`, "
                             f"e.g. `db.data.read.lat_p99 < 20ms`")
    parts = m["sel"].split(".")
    metric = parts[-1]
    if parts[0] == HOST:
        return _host(parts, m, text, source)
    if parts[0] == INTEGRITY:
        return _integrity(parts, m, text, source)
    if metric not in METRICS:
        raise ThresholdError(f"unknown metric {metric!r} in {text!r} "
                             f"(known: {', '.join(METRICS)})")
    raw = m["val"].strip()
    t = _TARGET.match(raw)
    if t:
        if metric not in ("iops", "mbps", "iops_median", "tps", "au"):
            raise ThresholdError(f"{text!r}: only iops, iops_median, tps, au and mbps compare "
                                 f"with `target`")
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
    elif metric in SECONDS and unit in (None, "s"):
        pass  # seconds
    elif metric in PERCENT and unit in (None, "%"):
        pass  # percent
    elif unit:
        raise ThresholdError(f"{text!r}: {metric} takes a plain number, not {unit!r}")
    return Threshold(tuple(parts[:-1]), metric, m["op"], num, None, _norm(m), source)


def _host(parts: list[str], m: re.Match[str], text: str, source: str) -> Threshold:
    metric = parts[-1]
    if len(parts) not in (2, 3) or not host_metric(metric):
        raise ThresholdError(f"{text!r}: a host threshold is `host[.NAME].METRIC OP number`, "
                             f"METRIC one of {', '.join(HOST_METRICS)} (or with `_max`)")
    v = _VALUE.match(m["val"].strip())
    if not v or (v["unit"] and v["unit"] != "%"):
        raise ThresholdError(f"{text!r}: a host metric takes a plain number, e.g. 80")
    return Threshold(tuple(parts[:-1]), metric, m["op"], float(v["num"]), None, _norm(m),
                     source)


def _integrity(parts: list[str], m: re.Match[str], text: str, source: str) -> Threshold:
    v = _VALUE.match(m["val"].strip())
    if len(parts) not in (2, 3) or parts[-1] not in INTEGRITY_METRICS or not v or v["unit"]:
        raise ThresholdError(f"{text!r}: an integrity threshold is `integrity[.WORKLOAD].METRIC "
                             f"OP count`, METRIC one of {', '.join(INTEGRITY_METRICS)}, e.g. "
                             f"`integrity.corrupt == 0`")
    return Threshold(tuple(parts[:-1]), parts[-1], m["op"], float(v["num"]), None, _norm(m),
                     source)


def _norm(m: re.Match[str]) -> str:
    return f"{m['sel']} {m['op']} {m['val'].strip()}"

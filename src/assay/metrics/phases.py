"""Before / during / between / after each timeline event, and the recovery after it.

Phases are windows of the measured time, cut at the step events of events.ndjson (those with
`annotate: true`). Each is re-aggregated exactly from the stored per-second samples with
`summary.aggregate`, so a phase's p99 comes from its merged histograms, not from averaging.

    before   measured start → first event          during   each event (its whole seconds)
    between  one event's end → the next's start    after    last event's end → run end

A sample covers the second that ends at its `t` and belongs to the window its middle is in
(as in `summary.aggregate`); an event window is widened to whole seconds
(`floor(t_start)` to `ceil(t_end)`, at least one), so a 0.2 s snapshot owns the second it fell
in. Totals join the windows of a kind: `during` (every event), `during NAME` (the events of
step or action NAME), `before`, `between`, `after`.

Recovery of a component after an event: seconds from the event's end until the component is
back near its `before` level — IOPS at least 90 % of it and mean latency at most 1.5x (or
1 ms more, whichever is larger) — and stays there for 3 seconds (or to the end of the run).
None when it never got back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.metrics.summary import Accumulator, ComponentInfo, Stats

IOPS_TOLERANCE = 0.10  # back when IOPS >= 90 % of before
LATENCY_TOLERANCE = 0.50  # and mean latency <= 150 % of before
LATENCY_SLACK_MS = 1.0  # or <= before + 1 ms: sub-millisecond means jitter by more than 50 %
STABLE_S = 3  # for this many consecutive seconds

Window = tuple[float, float]  # (start, end]: samples whose interval ends inside


@dataclass
class PhaseReport:
    windows: list[dict[str, Any]] = field(default_factory=list)  # one per phase window
    totals: dict[str, dict[str, Stats]] = field(default_factory=dict)  # key -> component
    seconds: dict[str, float] = field(default_factory=dict)
    recovery: list[dict[str, Any]] = field(default_factory=list)  # one per event

    def stats(self, key: str, component: str) -> Stats | None:
        return self.totals.get(key, {}).get(component)

    def worst_recovery(self, component: str, step: str | None = None) \
            -> tuple[float | None, int, str]:
        """Longest recovery over the events (of step/action `step`): value, events, note."""
        values = [r["components"].get(component) for r in self.recovery
                  if step is None or step in (r["step"], r["action"])]
        if not values:
            return None, 0, "no event to recover from"
        if any(v is None for v in values):
            return None, len(values), "not back near its before level by the end of the run"
        return max(v for v in values if v is not None), len(values), ""

    def to_json(self) -> dict[str, Any]:
        return {
            "phases": self.windows,
            "phase_totals": {k: {"seconds": round(self.seconds.get(k, 0.0), 3),
                                 "stats": {c: s.to_json() for c, s in v.items()}}
                             for k, v in self.totals.items()},
            "recovery": self.recovery,
        }


def event_window(event: dict[str, Any]) -> Window:
    start = math.floor(float(event["t_start"]))
    end = math.ceil(float(event.get("t_end") or event["t_start"]))
    return float(start), float(max(end, start + 1))


def _merge(windows: list[Window]) -> list[Window]:
    out: list[Window] = []
    for lo, hi in sorted(windows):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _inside(sample: dict[str, Any], windows: Sequence[Window]) -> bool:
    middle = sample["t"] - sample["dt"] / 2  # as summary.aggregate: by the interval's middle
    return any(lo <= middle <= hi for lo, hi in windows)


def _stats(components: Sequence[ComponentInfo], samples: Iterable[dict[str, Any]],
           windows: Sequence[Window], start: float, end: float) -> dict[str, Stats]:
    # one pass, no copy of the samples: a long run's samples are read back from disk
    accs = {c.name: Accumulator(c, start, end) for c in components}
    for s in samples:
        acc = accs.get(s["c"])
        if acc is not None and _inside(s, windows):
            acc.add(s)
    return {name: acc.stats() for name, acc in accs.items()}


def analyse(components: Sequence[ComponentInfo], samples: Iterable[dict[str, Any]],
            events: Iterable[dict[str, Any]], start: float, end: float) -> PhaseReport:
    """Phases of the measured window [start, end] around the step events."""
    report = PhaseReport()
    marked = sorted((e for e in events if e.get("kind", "step") == "step" and
                     e.get("annotate", True) and e.get("t_start") is not None),
                    key=lambda e: float(e["t_start"]))
    own: list[tuple[dict[str, Any], Window]] = []
    for e in marked:
        lo, hi = event_window(e)
        lo, hi = max(lo, start), min(hi, end)
        if hi > lo:
            own.append((e, (lo, hi)))
    if not own:
        return report
    busy = _merge([w for _, w in own])
    quiet = [(lo, hi) for lo, hi in _gaps(busy, start, end)]
    named: list[tuple[str, str | None, str | None, int | None, Window]] = []
    for lo, hi in quiet:
        kind = "before" if lo <= start else ("after" if hi >= end else "between")
        named.append((kind, None, None, None, (lo, hi)))
    for e, w in own:
        named.append(("during", e.get("name"), e.get("action"), e.get("n"), w))
    named.sort(key=lambda x: x[4][0])
    groups: dict[str, list[Window]] = {}
    for kind, step, action, n, w in named:
        report.windows.append({"name": kind, "step": step, "action": action, "n": n,
                               "start": w[0], "end": w[1],
                               "stats": {c: s.to_json() for c, s in
                                         _stats(components, samples, [w], start, end).items()}})
        groups.setdefault(kind, []).append(w)
        if kind == "during":
            for label in {step, action} - {None}:
                groups.setdefault(f"during {label}", []).append(w)
    for key, ws in groups.items():
        report.totals[key] = _stats(components, samples, ws, start, end)
        report.seconds[key] = sum(hi - lo for lo, hi in ws)
    before = report.totals.get("before", {})
    for e, w in own:
        report.recovery.append({
            "step": e.get("name"), "action": e.get("action"), "n": e.get("n"),
            "t_end": e.get("t_end"),
            "components": {c.name: recovery_seconds(c, samples, before.get(c.name),
                                                    float(e.get("t_end") or w[1]), end)
                           for c in components}})
    return report


def _gaps(busy: list[Window], start: float, end: float) -> list[Window]:
    out, cursor = [], start
    for lo, hi in busy:
        if lo > cursor:
            out.append((cursor, lo))
        cursor = max(cursor, hi)
    if end > cursor:
        out.append((cursor, end))
    return out


def recovery_seconds(info: ComponentInfo, samples: Iterable[dict[str, Any]],
                     baseline: Stats | None, t_end: float, end: float) -> float | None:
    """Seconds after `t_end` until the component is steadily back near `baseline`."""
    if baseline is None or baseline.seconds < 1 or not baseline.ios:
        return None
    keep = ("t", "dt", "ios", "lat_sum_ns")  # not the histograms: a day of them is large
    rows = sorted(({k: s[k] for k in keep} for s in samples
                   if s["c"] == info.name and t_end < s["t"] <= end + 1e-6),
                  key=lambda s: s["t"])
    base_lat = baseline.lat_avg_ms or 0.0

    def good(s: dict[str, Any]) -> bool:
        iops = s["ios"] / s["dt"] if s["dt"] else 0.0
        lat = s["lat_sum_ns"] / s["ios"] / 1e6 if s["ios"] else 0.0
        return iops >= (1 - IOPS_TOLERANCE) * baseline.iops and \
            lat <= max((1 + LATENCY_TOLERANCE) * base_lat, base_lat + LATENCY_SLACK_MS)

    for i, s in enumerate(rows):
        run = rows[i:i + STABLE_S]
        if all(good(r) for r in run):
            return round(max(0.0, float(s["t"]) - float(s["dt"]) - t_end), 3)
    return None

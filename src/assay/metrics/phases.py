"""Before / during / between / after each timeline event, and the recovery after it.

Phases are windows of the measured time, cut at the step events of events.ndjson (those with
`annotate: true`). Each is re-aggregated exactly from the stored per-second samples with
`summary.Accumulator`, so a phase's p99 comes from its merged histograms, not from averaging;
every window, and then every recovery, in one pass over the samples each.

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
None when it never got back. When the target steps (a cluster's lost host leaves it, a
moved or returning instance adds to it), "its before level" is scaled to the target then: a
healthy N-1 cluster is back at once at the survivors' share (the before IOPS times the
target then over the before window's), not never.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.metrics.steps import stepped
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
    keys_of: list[list[str]] = []  # the groups each named window belongs to
    for kind, step, action, _, w in named:
        labels = sorted(x for x in {step, action} if x is not None)
        keys = [kind] + ([f"during {x}" for x in labels] if kind == "during" else [])
        for key in keys:
            groups.setdefault(key, []).append(w)
        keys_of.append(keys)
    per_window, per_group = _windows_stats(components, samples, [x[4] for x in named],
                                           keys_of, start, end)
    for (kind, step, action, n, w), stats in zip(named, per_window, strict=True):
        report.windows.append({"name": kind, "step": step, "action": action, "n": n,
                               "start": w[0], "end": w[1],
                               "stats": {c: s.to_json() for c, s in stats.items()}})
    for key, ws in groups.items():
        report.totals[key] = per_group[key]
        report.seconds[key] = sum(hi - lo for lo, hi in ws)
    before = report.totals.get("before", {})
    base = next((w for k, *_, w in named if k == "before"), None)
    recovered = recoveries(components, samples, before,
                           [float(e.get("t_end") or w[1]) for e, w in own], end, base)
    for (e, _), per_component in zip(own, recovered, strict=True):
        report.recovery.append({
            "step": e.get("name"), "action": e.get("action"), "n": e.get("n"),
            "t_end": e.get("t_end"), "components": per_component})
    return report


def _windows_stats(components: Sequence[ComponentInfo], samples: Iterable[dict[str, Any]],
                   windows: Sequence[Window], keys_of: Sequence[list[str]], start: float,
                   end: float) -> tuple[list[dict[str, Stats]], dict[str, dict[str, Stats]]]:
    """Stats per window and per group of windows, in one pass over the samples (a long
    run's samples are read back from disk: one pass, whatever the number of events)."""
    def accs() -> dict[str, Accumulator]:
        return {c.name: Accumulator(c, start, end) for c in components}

    per_window = [accs() for _ in windows]
    per_group = {k: accs() for keys in keys_of for k in keys}
    order = sorted(range(len(windows)), key=lambda i: windows[i][0])
    starts = [windows[i][0] for i in order]
    longest = max((hi - lo for lo, hi in windows), default=0.0)
    for s in samples:
        middle = s["t"] - s["dt"] / 2  # as summary.aggregate: by the interval's middle
        hit: set[str] = set()
        j = bisect.bisect_right(starts, middle) - 1
        while j >= 0 and starts[j] >= middle - longest:
            i = order[j]
            lo, hi = windows[i]
            if lo <= middle <= hi and s["c"] in per_window[i]:
                per_window[i][s["c"]].add(s)
                hit.update(keys_of[i])
            j -= 1
        for key in hit:
            per_group[key][s["c"]].add(s)
    return ([{n: a.stats() for n, a in w.items()} for w in per_window],
            {k: {n: a.stats() for n, a in g.items()} for k, g in per_group.items()})


def recoveries(components: Sequence[ComponentInfo], samples: Iterable[dict[str, Any]],
               before: dict[str, Stats], ends: Sequence[float], end: float,
               base: Window | None = None) -> list[dict[str, float | None]]:
    """Per event end: each component's recovery (see the module docstring), in one pass."""
    scales = {c.name: _scale(c, base) for c in components}
    trackers = [{c.name: _Recovery(before.get(c.name), t_end, scales[c.name])
                 for c in components} for t_end in ends]
    for s in samples:
        if not s["t"] <= end + 1e-6:
            continue
        for per in trackers:
            tracker = per.get(s["c"])
            if tracker is not None:
                tracker.add(s)
    return [{name: t.result() for name, t in per.items()} for per in trackers]


class _Recovery:
    """Seconds after `t_end` until a component is steadily back near `baseline`, fed its
    samples in time order: the start of the first run of STABLE_S good seconds (or of good
    seconds to the end of the run)."""

    def __init__(self, baseline: Stats | None, t_end: float,
                 scale: Callable[[float], float] | None = None):
        self.scale = scale
        self.baseline = baseline if baseline is not None and baseline.seconds >= 1 and \
            baseline.ios else None
        self.t_end = t_end
        self.streak: float | None = None  # where the current run of good seconds began
        self.length = 0
        self.found: float | None = None

    def add(self, s: dict[str, Any]) -> None:
        if self.baseline is None or self.found is not None or s["t"] <= self.t_end:
            return
        if _good(s, self.baseline, self.scale(s["t"] - s["dt"] / 2) if self.scale else 1.0):
            if not self.length:
                self.streak = float(s["t"]) - float(s["dt"])
            self.length += 1
            if self.length >= STABLE_S:
                self.found = self.streak
        else:
            self.length = 0

    def result(self) -> float | None:
        found = self.found if self.found is not None else (self.streak if self.length else
                                                           None)
        return None if found is None else round(max(0.0, found - self.t_end), 3)


def _scale(c: ComponentInfo, base: Window | None) -> Callable[[float], float] | None:
    """The target at `t` over its mean in the before window, for a target that steps
    (None otherwise: the before level as it is)."""
    if not c.target_steps or not c.target_iops or base is None or base[1] <= base[0]:
        return None
    lo, hi = base
    edges = [lo, *(x for x, _ in c.target_steps if lo < x < hi), hi]
    mean = sum((stepped(c.target_iops, c.target_steps, a) or 0.0) * (b - a)
               for a, b in zip(edges, edges[1:], strict=False)) / (hi - lo)
    if mean <= 0:
        return None
    return lambda t: (stepped(c.target_iops, c.target_steps, t) or 0.0) / mean


def _good(s: dict[str, Any], baseline: Stats, scale: float = 1.0) -> bool:
    base_lat = baseline.lat_avg_ms or 0.0
    iops = s["ios"] / s["dt"] if s["dt"] else 0.0
    lat = s["lat_sum_ns"] / s["ios"] / 1e6 if s["ios"] else 0.0
    return iops >= (1 - IOPS_TOLERANCE) * baseline.iops * scale and \
        lat <= max((1 + LATENCY_TOLERANCE) * base_lat, base_lat + LATENCY_SLACK_MS)


def _gaps(busy: list[Window], start: float, end: float) -> list[Window]:
    out, cursor = [], start
    for lo, hi in busy:
        if lo > cursor:
            out.append((cursor, lo))
        cursor = max(cursor, hi)
    if end > cursor:
        out.append((cursor, end))
    return out

"""How many of the measured seconds the samples really grade.

A verdict is worth the seconds it stands on. fio's status dumps can come late (slow fixed-rate
jobs on a busy machine: the first after 5 s), so one sample may span the end of the warm-up and
the start of the measured window: its IOs cannot be told apart, and those seconds are measured
but not graded. The same holds where no sample lies at all (a run whose data stops early).

A sample grades the part of the window it covers when it belongs to the window (its middle lies
in it, as `summary.Accumulator` counts it) and reaches at most EDGE_S outside; a component with
a window of its own (idle outside it) is graded by every sample that overlaps it. Each sample
also vouches for EDGE_S around it: fio's 1 s dumps fall anywhere on the window's edges.
Timed bursts (a checkpoint's save and restore) are graded by their length: they vouch for no
second, and a run of bursts alone is measured up to its last sample.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from assay.metrics.summary import ComponentInfo

EDGE_S = 0.5  # half of fio's status interval
COMPLETE = 0.95  # a run graded on less of its measured time cannot pass


@dataclass(frozen=True)
class Coverage:
    measured_s: float  # the measured window's length (up to where the run ended)
    graded_s: float  # the seconds of it that samples grade

    @property
    def complete(self) -> bool:
        return self.measured_s > 0 and self.graded_s >= COMPLETE * self.measured_s

    def reason(self) -> str:
        """Why the run cannot be graded (empty when it can)."""
        if self.complete:
            return ""
        if self.measured_s <= 0:
            return "no seconds were measured after the warm-up: nothing could be graded"
        return (f"graded {self.graded_s:.1f}s of the {self.measured_s:.1f}s measured "
                f"({100 * self.graded_s / self.measured_s:.0f}%, under {COMPLETE:.0%}): fio's "
                f"status dumps came late or stopped, and a verdict on part of the window is "
                f"no verdict; lengthen the warm-up or the run, or load the host less")

    def to_json(self) -> dict[str, float]:
        return {"measured_s": round(self.measured_s, 3), "graded_s": round(self.graded_s, 3)}


def coverage(infos: Iterable[ComponentInfo], samples: Iterable[dict[str, Any]], start: float,
             end: float, ended_early: bool = False) -> Coverage:
    """The seconds of [start, end] that the samples grade, over every component; a run that
    `ended_early` measured only up to its last sample."""
    windows: dict[str, tuple[float, float, bool]] = {}
    infos = list(infos)
    for i in infos:
        if i.timed:  # bursts (a checkpoint's save, restore), graded by their length, not by
            continue  # the second; idle between them, and done when they are
        lo = max(start, i.start_s)
        hi = min(end, i.end_s) if i.end_s is not None else end
        if hi > lo:
            windows[i.name] = (lo, hi, i.start_s > 0 or i.end_s is not None)
    spans: list[list[float]] = []
    last = start
    for s in samples:
        b = float(s["t"])
        last = max(last, b)
        w = windows.get(s["c"])
        if w is None:
            continue
        lo, hi, own = w
        a = b - float(s["dt"])
        inside = min(b, hi) - max(a, lo)
        if inside <= 0:
            continue
        if not own and (not lo <= (a + b) / 2 <= hi or (b - a) - inside > EDGE_S):
            continue  # not in the window, or mixing in IO from outside it
        a, b = max(a - EDGE_S, lo), min(b + EDGE_S, hi)
        if spans and spans[-1][0] <= a <= spans[-1][1]:  # samples come in time order
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    if infos and all(i.timed for i in infos):  # bursts alone: measured up to the last one
        measured = max(min(end, last) - start, 0.0)
        return Coverage(measured, measured)
    if ended_early:
        end = min(end, last)
        spans = [[a, min(b, end)] for a, b in spans]
    return Coverage(max(end - start, 0.0), _union(spans))


def _union(spans: list[list[float]]) -> float:
    total, reach = 0.0, float("-inf")
    for a, b in sorted(spans):
        a = max(a, reach)
        if b > a:
            total += b - a
            reach = b
    return total

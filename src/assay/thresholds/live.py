"""Thresholds graded while the run goes, by the same `evaluate` as the final verdict, over
running statistics of the measured window.

A failure that no later second can undo (a latency maximum above its bound, a fixed-rate
component that fell behind its schedule) is final: a search trial stops there, and the live
progress shows which thresholds hold so far. Phase and recovery thresholds grade part of the
run only, and wait for the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.metrics.summary import Accumulator, ComponentInfo
from assay.thresholds.evaluate import Result, evaluate, matches, result_count
from assay.thresholds.grammar import Threshold

PERCENTILE_METRICS = {"lat_p50", "lat_p95", "lat_p99", "lat_p999"}


def final(r: Result) -> bool:
    """A failed result that stays failed whatever the rest of the run does."""
    t = r.threshold
    if r.passed or r.observed is None:
        return False
    if t.target_fraction is not None:
        return r.note.startswith("fell ")  # behind its schedule: see evaluate._check
    return t.metric in ("lat_max", "behind") and t.op in ("<", "<=")


class LiveVerdict:
    def __init__(self, thresholds: Sequence[Threshold], components: Sequence[ComponentInfo],
                 start: float, end: float, total: int | None = None):
        """`total`: the results the run's verdict will count (a cluster's adds each host's
        and its own, plan/tally.py); by default those of `thresholds`."""
        self.total = total if total is not None else \
            sum(result_count(t, components) for t in thresholds)
        self.thresholds = [t for t in thresholds if not t.phase and t.metric != "recovery"
                           and not t.host]
        self.components = list(components)
        # running statistics of the components a threshold grades, with percentiles where
        # one reads them: the rest cost nothing each second
        graded = [c for c in components if any(matches(t, c) for t in self.thresholds)]
        self.acc = {c.name: Accumulator(c, start, end) for c in graded}
        self.percentiles = {c.name: any(t.metric in PERCENTILE_METRICS for t in self.thresholds
                                        if matches(t, c)) for c in graded}
        self.results: list[Result] = []

    def add(self, samples: Sequence[dict[str, Any]]) -> None:
        """Count a second's samples and grade again."""
        counted = [s for s in samples if s["c"] in self.acc and self.acc[s["c"]].add(s)]
        if counted and self.thresholds:
            stats = {n: a.stats(self.percentiles[n]) for n, a in self.acc.items()
                     if a.ios or a.seconds}
            graded = [c for c in self.components if c.name in stats]
            self.results = evaluate([t for t in self.thresholds if _graded(t, graded)],
                                    graded, stats) if graded else []

    def failure(self) -> str | None:
        """Why the verdict is already certain, or None."""
        for r in self.results:
            if final(r):
                why = r.note or f"{r.observed:g} against {r.bound:g}"
                return f"{r.component}: {r.threshold.text!r} failed ({why}) for the rest of " \
                       f"the run"
        return None

    def summary(self) -> str:
        """`thresholds 5/6` for the progress line (empty before the measured window), and
        `(of 9)` while some wait for the verdict (phases, hosts) or a later component: the
        count the run's header announced and its summary ends with."""
        if not self.results:
            return ""
        n = len(self.results)
        return f"thresholds {sum(r.passed for r in self.results)}/{n}" + \
            (f" (of {self.total})" if self.total > n else "")


def _graded(t: Threshold, components: Sequence[ComponentInfo]) -> bool:
    return any(matches(t, c) and (t.target_fraction is None or c.target_iops)
               for c in components)

"""Several stored runs side by side: overlaid series, per-metric deltas, what else differed.

A delta is called a real difference only when it stands out from the run-to-run noise. With
repeat statistics in run.json (`repeat`, from `--repeat` runs) the test uses those; otherwise it
uses the per-second values of each run's measured window, averaged in batches long enough to be
nearly uncorrelated (metrics/stats.py). Both are Welch's t-test (unequal variances), two-sided,
at 5 %.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay import __version__
from assay.metrics.stats import ALPHA, BatchTest, batch_welch, welch_p
from assay.report import rundata
from assay.report.diff import differences, facts
from assay.report.html import clean_json, page
from assay.report.salvage import has_data, measured
from assay.results.record import RunRecord
from assay.results.recordparts import ComponentStats
from assay.results.rundir import read_record

METRICS = ("iops", "mbps", "lat_avg_ms", "lat_p99_ms")


class CompareError(ValueError):
    pass


@dataclass
class RunView:
    label: str
    path: Path
    record: RunRecord
    cols: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    offset: float = 0.0  # subtracted from this run's times (alignment)

    @classmethod
    def load(cls, label: str, path: Path) -> RunView:
        # a crashed run: what it measured up to there
        return cls(label, path, measured(path, read_record(path)), rundata.per_second(path),
                   rundata.steps(path))

    def per_second_values(self, component: str, metric: str) -> list[float]:
        """The metric's per-second values inside the measured window."""
        cols = self.cols.get(component)
        if not cols:
            return []
        lo, hi = self.record.measured_window()
        dts = cols.get("dt")
        out = []
        for i, t in enumerate(cols["t"]):
            v = cols[metric][i]
            if v is None or not (lo < t <= hi + 1e-6) or (dts and dts[i] < rundata.MIN_DT):
                continue
            out.append(float(v))
        return out

    def stat(self, component: str, metric: str) -> float | None:
        """A whole-window statistic by its run.json name (`iops`, `lat_p99_ms`, ...)."""
        s = self.record.stats.get(component)
        if s is None or metric not in ComponentStats.model_fields:
            return None
        v = getattr(s, metric)
        return float(v) if isinstance(v, int | float) else None

    def repeat_stat(self, component: str, metric: str) -> tuple[float, float, int] | None:
        """(mean, stdev, n) across repeats when run.json has `repeat` statistics."""
        rep = self.record.repeat
        s = rep.stats.get(component, {}).get(metric) if rep else None
        if rep is None or rep.n < 2 or s is None or s.mean is None or s.stdev is None:
            return None
        return s.mean, s.stdev, rep.n


def versus(base: RunView, other: RunView, component: str, metric: str) -> dict[str, Any]:
    b, o = base.stat(component, metric), other.stat(component, metric)
    delta = None if b in (None, 0) or o is None else 100.0 * (o - b) / b
    rb, ro = base.repeat_stat(component, metric), other.repeat_stat(component, metric)
    p: float | None
    if rb and ro:
        p = welch_p(rb[0], rb[1] ** 2, rb[2], ro[0], ro[1] ** 2, ro[2])
        basis = f"repeats n={rb[2]}/{ro[2]}"
    else:
        xb, xo = base.per_second_values(component, metric), other.per_second_values(component,
                                                                                     metric)
        test = batch_welch(xb, xo)
        p, basis = test.p, batch_basis(test, len(xb), len(xo))
    return {"delta_pct": None if delta is None else round(delta, 2),
            "p": None if p is None else float(f"{p:.3g}"),
            "significant": None if p is None else p < ALPHA, "basis": basis}


def method_text(views: list[RunView]) -> str:
    repeats = all(v.record.repeat is not None for v in views)
    if repeats:
        return ("Noise test: Welch's t-test on the repeat statistics (mean and standard deviation "
                "over --repeat runs) stored in each run; 'differs' when p < 0.05.")
    return ("Noise test: Welch's t-test on batch means of the per-second values of each run's "
            "measured window (no repeat statistics stored); 'differs' when p < 0.05. Seconds are "
            "correlated, so they are averaged in batches long enough for the batch means to be "
            "nearly uncorrelated (basis: batches × seconds). This measures the noise within a "
            "run, not between runs: confirm a small difference with --repeat runs.")


def batch_basis(test: BatchTest, nb: int, no: int) -> str:
    """What the per-second test stood on, e.g. `per-second, batch means 12×10 s`."""
    if test.size == 1:
        return f"per-second n={nb}/{no}, too short for batch means"
    kb, ko = test.batches
    counts = str(kb) if kb == ko else f"{kb}/{ko}"
    still = ", still correlated" if test.correlated else ""
    return f"per-second, batch means {counts}×{test.size} s{still}"


# -- the comparison ---------------------------------------------------------------------------

def labels(n: int) -> list[str]:
    return [chr(ord("A") + i) if i < 26 else f"R{i + 1}" for i in range(n)]


def load_views(paths: list[Path]) -> list[RunView]:
    views = [RunView.load(lab, p) for lab, p in zip(labels(len(paths)), paths, strict=True)]
    for v in views:  # against no data, every metric would be "within noise"
        if not has_data(v.record):
            raise CompareError(f"run {v.label} ({v.record.id}, {v.record.status}) measured no "
                               f"second of its window: there is nothing to compare"
                               + (" against" if v is views[0] else ""))
    return views


def align(views: list[RunView], how: str) -> str:
    """Set each run's offset; returns a sentence saying how the series are aligned."""
    if how == "start":
        for v in views:
            v.offset = 0.0
        return "Series aligned on the start of each run's load."
    if not how.startswith("event:") or not how[6:]:
        raise CompareError(f"--align {how!r}: use `start` or `event:NAME` (a timeline step)")
    name = how[6:]
    for v in views:
        hit = next((s for s in v.steps if name in (s["name"], s["action"])), None)
        if hit is None:
            known = sorted({s["name"] for s in v.steps}) or ["none"]
            raise CompareError(f"--align {how}: run {v.label} ({v.path.name}) has no step named "
                               f"{name!r}; its steps: {', '.join(known)}")
        v.offset = float(hit["start"])
    return f"Series aligned on step {name!r} (time 0 = its start in each run)."


def components(views: list[RunView]) -> list[str]:
    seen: list[str] = []
    for v in views:
        for c in list(v.record.stats) + list(v.cols):
            if c not in seen:
                seen.append(c)
    return seen


def deltas(views: list[RunView]) -> list[dict[str, Any]]:
    base, out = views[0], []
    for c in components(views):
        for m in METRICS:
            values = [v.stat(c, m) for v in views]
            if all(x is None for x in values):
                continue
            out.append({"component": c, "metric": m, "values": values,
                        "versus": [versus(base, o, c, m) for o in views[1:]]})
    return out


def what_differed(views: list[RunView]) -> list[tuple[str, list[str]]]:
    return differences([facts(v.record, v.path) for v in views])


def _shift(series: dict[str, Any], offset: float) -> dict[str, Any]:
    if not offset:
        return series
    return {c: {m: [[round(t - offset, 3) for t in xs], ys] for m, (xs, ys) in ms.items()}
            for c, ms in series.items()}


def compare_data(views: list[RunView], how: str = "start") -> dict[str, Any]:
    note = align(views, how)
    runs = []
    for v in views:
        r, t = v.record, v.record.target
        last_t = max((c["t"][-1] for c in v.cols.values() if c["t"]), default=0.0)
        runs.append({
            "label": v.label, "id": r.id or v.path.name, "scenario": r.scenario.name,
            "status": r.status, "verdict": r.verdict.stored() if r.verdict else {},
            "started": r.started,
            "target": " · ".join(str(x) for x in (t.platform, t.fstype, t.path) if x),
            "series": _shift(rundata.chart_series(v.cols), v.offset),
            "phases": [{**p, "start": p["start"] - v.offset, "end": p["end"] - v.offset}
                       for p in rundata.phases(r, last_t)],
            "steps": [{**s, "start": s["start"] - v.offset,
                       "end": None if s["end"] is None else s["end"] - v.offset}
                      for s in v.steps],
            "latency": rundata.latency_curves(v.path, r)["curves"]})
    return clean_json({
        "kind": "compare", "generator": f"assay {__version__}", "generated": time.time(),
        "alignment_note": note, "method": method_text(views), "runs": runs,
        "components": components(views), "deltas": deltas(views),
        "differences": [[k, vals] for k, vals in what_differed(views)]})


def build_compare(views: list[RunView], how: str = "start") -> tuple[str, dict[str, Any]]:
    data = compare_data(views, how)
    return page(f"assay: comparison of {len(views)} runs", data), data

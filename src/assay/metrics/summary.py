"""Whole-window statistics per component, from per-second samples: the Accumulator that folds
them one at a time, and `aggregate` over a window (the Stats it yields: metrics/component.py).

Counts, bytes and latency sums add; histograms merge; the maximum is the maximum. Nothing is
averaged that should not be.

Two views come from the per-second samples themselves, as the tools assay emulates see them:
Jetstress grades performance-counter samples, each the average over its log interval (15 s), so
`lat_max_sample` is the largest 15 s average latency (one slow IO does not make it); X-Ray
charts 1 s samples and judges their median, so `iops_median` and `lat_avg_median` are the
medians of the per-second IOPS and average latency.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from assay.metrics.bursts import Bursts
from assay.metrics.component import ComponentInfo as ComponentInfo  # many import it from here
from assay.metrics.component import Stats as Stats  # many import it from here
from assay.metrics.histogram import PERCENTILES, Histogram
from assay.metrics.median import RunningMedian
from assay.metrics.training import AcceleratorClock


def ns_to_ms(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e6


def sample_bins(sample: dict[str, Any]) -> dict[str, int]:
    """A stored sample's histogram bins. In memory a run keeps them as JSON text
    (`bins_json`): a day of per-second dicts would take gigabytes, the text a tenth of it."""
    if "bins" in sample:
        return sample["bins"] or {}
    text = sample.get("bins_json")
    return json.loads(text) if text else {}


SAMPLE_S = 15.0  # Jetstress' LogInterval (JetstressConfig.xml: 15000 ms)
MIN_RATE_DT = 0.5  # s: fio's closing stub interval says little about the rate


class Accumulator:
    """Stats of one component over [start, end], fed one sample at a time: the verdict, the
    phases and the live check during a run use the same arithmetic, in memory that does not
    grow with the run."""

    def __init__(self, info: ComponentInfo, start: float, end: float):
        self.info = info
        self.lo = max(start, info.start_s)
        self.hi = min(end, info.end_s) if info.end_s is not None else end
        # A component with a window of its own (a workload that arrives or leaves, a corner
        # of the four) is idle outside it: every IO of an interval that overlaps the window
        # belongs to it, and its rate is those IOs over the part of those intervals inside the
        # window, however fio's dumps fall (and whatever subset of seconds a phase passes in).
        self.windowed = info.start_s > 0 or info.end_s is not None
        self.seconds = self.rate_seconds = 0.0
        self.target_ios = 0.0  # with target_steps: the target's IOs over the rate seconds
        self.ios = self.nbytes = self.rate_ios = 0
        self.lat_sum = 0.0
        self.lat_max: float | None = None
        self.behind = 0.0
        self.hist = Histogram()
        # 15 s counter samples: index -> [latency sum ns, IOs, seconds covered]
        self.windows: dict[int, list[float]] = {}
        # their largest averages so far, kept as windows close (samples move past them):
        # asking every second then costs the open windows only, not every window of the run
        self._open: set[int] = set()  # windows changed since they were last folded in
        self._closed_full: float | None = None  # over closed windows of >= half an interval
        self._closed_any: float | None = None  # over every closed window with IOs
        self._refold = False  # a sample reopened a closed window: fold them all again
        self.second_iops = RunningMedian()
        self.second_lat = RunningMedian()
        self.clock = AcceleratorClock(info.training) if info.training else None
        self.bursts = Bursts() if info.timed else None

    def _due(self, s: dict[str, Any], seconds: float) -> None:
        if self.info.target_steps:
            self.target_ios += (self.info.rate_at(s["t"] - s["dt"] / 2) or 0.0) * seconds

    def add(self, s: dict[str, Any]) -> bool:
        """Count a sample of this component if it lies in the window; True when it did."""
        if s["c"] != self.info.name:
            return False
        if self.clock is not None and s["t"] - s["dt"] / 2 < self.lo:
            self.clock.add(s["bytes"], s["dt"], counted=False)  # fills or drains its queue
        if self.windowed:
            inside = min(s["t"], self.hi) - max(s["t"] - s["dt"], self.lo)
            if inside <= 0:
                return False
            self.rate_ios += s["ios"]
            self.rate_seconds += inside
            self._due(s, inside)
        else:
            middle = s["t"] - s["dt"] / 2  # an interval belongs to the window its middle is in
            if not self.lo <= middle <= self.hi:
                return False
            if s["dt"] >= MIN_RATE_DT:  # fio's closing stub says little about the rate
                self.rate_seconds += s["dt"]
                self.rate_ios += s["ios"]
                self._due(s, s["dt"])
        self.seconds += s["dt"]
        self.ios += s["ios"]
        self.nbytes += s["bytes"]
        self.lat_sum += s["lat_sum_ns"]
        if s.get("lat_max_ns"):
            self.lat_max = max(self.lat_max or 0, s["lat_max_ns"])
        self.behind = max(self.behind, s.get("behind_s") or 0.0)
        self.hist.add(Histogram.from_fio(sample_bins(s)))
        if self.clock is not None:
            self.clock.add(s["bytes"], s["dt"])
        if self.bursts is not None:
            self.bursts.add(s["ios"], s["bytes"], s["dt"])
        middle = s["t"] - s["dt"] / 2
        index = int(max(middle - self.lo, 0.0) // SAMPLE_S)
        if index in self.windows and index not in self._open:
            self._refold = True
        self._open.add(index)
        w = self.windows.setdefault(index, [0.0, 0, 0.0])
        w[0] += s["lat_sum_ns"]
        w[1] += s["ios"]
        w[2] += s["dt"]
        if s["dt"] >= MIN_RATE_DT:
            self.second_iops.add(s["ios"] / s["dt"])
            if s["ios"]:
                self.second_lat.add(s["lat_sum_ns"] / s["ios"] / 1e6)
        return True

    def max_sample_ms(self) -> float | None:
        """The largest 15 s average latency. A window that covers less than half an interval
        (the run's tail) is no counter sample, unless the run had no full one."""
        if self._refold:  # samples out of order: every window not open is closed again
            self._closed_full = self._closed_any = None
            self._close(i for i in self.windows if i not in self._open)
            self._refold = False
        if len(self._open) > 1:  # all but the latest window are past: close them
            latest = max(self._open)
            self._close(i for i in self._open if i != latest)
            self._open = {latest}
        full, any_ = self._closed_full, self._closed_any
        for i in self._open:
            w = self.windows[i]
            if w[1]:
                avg = w[0] / w[1] / 1e6
                any_ = avg if any_ is None else max(any_, avg)
                if w[2] >= SAMPLE_S / 2:
                    full = avg if full is None else max(full, avg)
        return full if full is not None else any_

    def _close(self, indices: Iterable[int]) -> None:
        for i in indices:
            w = self.windows[i]
            if not w[1]:
                continue
            avg = w[0] / w[1] / 1e6
            self._closed_any = avg if self._closed_any is None else max(self._closed_any, avg)
            if w[2] >= SAMPLE_S / 2:
                self._closed_full = avg if self._closed_full is None \
                    else max(self._closed_full, avg)

    def stats(self, percentiles: bool = True) -> Stats:
        """The statistics so far; without `percentiles` (the live verdict's, when no
        threshold reads them) they are None: their walk of the whole histogram costs more the
        more buckets a long run's tail has reached."""
        info, lat_max = self.info, self.lat_max
        seconds = self.rate_seconds if self.windowed else self.seconds
        rate_seconds = self.rate_seconds
        pct = self.hist.percentiles(cap=int(lat_max) if lat_max else None) if percentiles \
            else dict.fromkeys(PERCENTILES)
        iops = self.rate_ios / rate_seconds if rate_seconds else 0.0
        target = info.target_iops
        if info.target_steps and rate_seconds:
            target = self.target_ios / rate_seconds or None
        tolerance = 0.0
        if target and rate_seconds and not info.closed:
            # Poisson arrivals: 95 % prediction band (X-Ray's 1.96·√λ); even pacing: each job
            # can be one IO early or late at either window edge, and never less than 0.5 %
            tolerance = (1.96 * math.sqrt(target * rate_seconds) / rate_seconds
                         if info.poisson else max(0.005 * target, 2 * info.jobs / rate_seconds))
        return Stats(
            component=info.name, seconds=seconds, ios=self.ios, bytes=self.nbytes, iops=iops,
            mbps=self.nbytes / seconds / 1e6 if seconds else 0.0,
            lat_avg_ms=self.lat_sum / self.ios / 1e6 if self.ios else None,
            lat_p50_ms=ns_to_ms(pct[50.0]), lat_p95_ms=ns_to_ms(pct[95.0]),
            lat_p99_ms=ns_to_ms(pct[99.0]), lat_p999_ms=ns_to_ms(pct[99.9]),
            lat_max_ms=ns_to_ms(lat_max), target_iops=target, behind_max_s=self.behind,
            rate_tolerance=tolerance, lat_max_sample_ms=self.max_sample_ms(),
            iops_median=self.second_iops.value(), lat_avg_median_ms=self.second_lat.value(),
            training=self.clock.figures() if self.clock is not None else None,
            bursts=self.bursts.figures() if self.bursts is not None else None)


def aggregate(info: ComponentInfo, samples: Iterable[dict[str, Any]], start: float,
              end: float) -> Stats:
    """Stats of one component over the samples whose whole interval lies in [start, end]
    (within the few ms that fio's status dumps drift)."""
    acc = Accumulator(info, start, end)
    for s in samples:
        acc.add(s)
    return acc.stats()


def aggregate_all(infos: Iterable[ComponentInfo], samples: Iterable[dict[str, Any]],
                  start: float, end: float) -> dict[str, Stats]:
    """`aggregate` for every component in one pass over the samples."""
    accs = {i.name: Accumulator(i, start, end) for i in infos}
    for s in samples:
        acc = accs.get(s["c"])
        if acc is not None:
            acc.add(s)
    return {name: acc.stats() for name, acc in accs.items()}

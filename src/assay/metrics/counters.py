"""fio's per-job counters (IOs, bytes, latency sum, maximum and histogram), read from a
status dump's job, and `Parsed`: each job read once, however many series read it.

A cluster's merged dump holds the same job objects as its hosts' dumps, so a host's series
and the merged series read each job once between them; a lost host's job, frozen at its
loss, is read once, not every second.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.metrics.histogram import Histogram

DIRECTIONS = ("read", "write")
FILE_ENGINE_MARK = "file"  # filecreate, filestat, filedelete: their IO is timed as clat only


@dataclass
class Cumulative:
    ios: int = 0
    bytes: int = 0
    lat_sum_ns: float = 0.0
    lat_max_ns: int = 0
    hist: Histogram = field(default_factory=Histogram)  # an interval's: the IOs in it
    cum_max_ns: int = 0  # in an interval diff: the job's maximum so far (caps bucket values)
    bins: Mapping[str, int] = field(default_factory=dict)  # a dump's: fio's, as it sent them
    # the last `since`: a cluster host's job is diffed for its host's series and again for
    # the merged one, against the same earlier counters (Parsed gives both the same objects)
    _since: tuple[Cumulative, Histogram] | None = field(default=None, repr=False,
                                                        compare=False)

    def since(self, earlier: Cumulative) -> Histogram:
        """The IOs completed since `earlier` (fio's bins are cumulative). A long run's bins
        hold every bucket it ever hit; the few that moved this second are found in one C-level
        pass (items views), and only they are walked here: a day's run costs each second what
        its first minute did. The result is shared: never changed by its readers."""
        if self._since is not None and self._since[0] is earlier:
            return self._since[1]
        out = Histogram()
        for k, v in self.bins.items() - earlier.bins.items():
            d = v - earlier.bins.get(k, 0)
            if d > 0:
                out.bins[int(k)] = d
        earlier._since = None  # no chain of every second's counters held
        self._since = (earlier, out)
        return out


def counters(job: dict[str, Any], d: str) -> Cumulative:
    """One job's counters in direction `d` (read, write), from its dump."""
    part = job.get(d) or {}
    lat = part.get("lat_ns") or {}
    engine = str((job.get("job options") or {}).get("ioengine") or "")
    if FILE_ENGINE_MARK in engine and not lat.get("N") and (part.get("clat_ns") or {}).get("N"):
        lat = part["clat_ns"]  # fio's file engines (filecreate, filestat, ...) time clat only
    hist_src = lat if "bins" in lat else (part.get("clat_ns") or {})
    n = int(lat.get("N") or 0)
    return Cumulative(
        ios=n,  # lat_ns.N, not total_ios: total_ios stays 0 in interim dumps of some engines
        bytes=int(part.get("io_bytes") or 0),
        lat_sum_ns=float(lat.get("mean") or 0.0) * n,
        lat_max_ns=int(lat.get("max") or 0),
        bins=hist_src.get("bins") or {},
    )


class Parsed:
    """Jobs' counters by the job object: a merged dump's generation, and the one before (a
    frozen job is carried over). `turn` starts a generation: the merge step's, each dump."""

    def __init__(self) -> None:
        self._now: dict[tuple[int, str], tuple[dict[str, Any], Cumulative]] = {}
        self._old: dict[tuple[int, str], tuple[dict[str, Any], Cumulative]] = {}

    def get(self, job: dict[str, Any], d: str) -> Cumulative:
        key = (id(job), d)  # the job is held beside it: its id is not reused meanwhile
        hit = self._now.get(key) or self._old.get(key)
        if hit is None or hit[0] is not job:
            hit = (job, counters(job, d))
        self._now[key] = hit
        return hit[1]

    def turn(self) -> None:
        self._old, self._now = self._now, {}

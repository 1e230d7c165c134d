"""pgbench's per-transaction logs folded into per-second samples.

Each line of a `pgbench -l` log is one transaction:
`client tx_no latency_us|skipped|failed script_no end_epoch end_us [schedule_lag_us] [retries]`.
With `-R`, pgbench measures latency from the transaction's *scheduled* start, so it already is
the latency from the due time (no coordinated omission); the schedule lag is how late the
transaction actually began. Latencies go into histograms with 128 buckets per power of two
(under 0.4 % error) so that seconds, threads and phases merge exactly, as fio's bins do.

pgbench writes its logs through stdio buffers: a second is emitted once it is GRACE_S old,
and a transaction that still arrives for an emitted second counts in the next one emitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.agent.pgfold import bucket  # one bucketing for this machine and the hosts
from assay.metrics.histogram import Histogram
from assay.metrics.sampler import Sample

GRACE_S = 3


def _count(h: Histogram, ns: int) -> None:
    b = bucket(ns)
    h.bins[b] = h.bins.get(b, 0) + 1


@dataclass
class Second:
    """What one stream of transactions did in one second."""

    commits: int = 0
    failed: int = 0  # failed (errors past --max-tries) and skipped (--latency-limit)
    lat_sum_ns: float = 0.0
    lat_max_ns: int = 0
    hist: Histogram = field(default_factory=Histogram)
    lag: Histogram = field(default_factory=Histogram)
    lag_sum_ns: float = 0.0
    lag_max_ns: int = 0


@dataclass
class Components:
    """The component names of one postgres workload; `streams` maps a script number to the
    stream of its transaction type (TPC-C-like mix), all of them count in `tx` too."""

    workload: str
    streams: dict[int, str] = field(default_factory=dict)
    rate: float | None = None

    def names(self) -> list[str]:
        w = self.workload
        out = [f"{w}.tx.commit", f"{w}.tx.failed"]
        if self.rate:
            out.append(f"{w}.tx.lag")
        return out + [f"{w}.{s}.commit" for s in self.streams.values()]


class TxLog:
    """Reads the growing log files `prefix.*` and hands out finished seconds as Samples."""

    def __init__(self, prefix: Path, components: Components, start_epoch: float):
        self.prefix = prefix
        self.c = components
        self.start = start_epoch  # pgbench's launch: second k covers [start+k, start+k+1)
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        self._pending: dict[int, dict[str, Second]] = {}  # second -> stream -> counts
        self._next = 0  # the first second not emitted yet
        self.totals = {"commits": 0, "failed": 0, "skipped": 0}

    def _read(self) -> None:
        for path in sorted(self.prefix.parent.glob(self.prefix.name + ".*")):
            with open(path, "rb") as f:
                f.seek(self._offsets.get(path, 0))
                chunk = f.read()
            self._offsets[path] = self._offsets.get(path, 0) + len(chunk)
            data = self._partial.pop(path, b"") + chunk
            lines = data.split(b"\n")
            if lines[-1]:
                self._partial[path] = lines[-1]
            for line in lines[:-1]:
                self._line(line.split())

    def _line(self, f: list[bytes]) -> None:
        if len(f) < 6:
            return
        end = int(f[4]) + int(f[5]) / 1e6
        sec = max(int(end - self.start), self._next)
        streams = self._pending.setdefault(sec, {})
        script = int(f[3])
        names = ["tx"] + ([self.c.streams[script]] if script in self.c.streams else [])
        for name in names:
            s = streams.setdefault(name, Second())
            if f[2] in (b"skipped", b"failed"):
                s.failed += 1
                continue
            s.commits += 1
            ns = int(f[2]) * 1000
            s.lat_sum_ns += ns
            s.lat_max_ns = max(s.lat_max_ns, ns)
            _count(s.hist, ns)
            if self.c.rate and len(f) > 6:
                lag = int(f[6]) * 1000
                s.lag_sum_ns += lag
                s.lag_max_ns = max(s.lag_max_ns, lag)
                _count(s.lag, lag)
        if f[2] == b"skipped":
            self.totals["skipped"] += 1
        elif f[2] == b"failed":
            self.totals["failed"] += 1
        else:
            self.totals["commits"] += 1

    def poll(self, now: float, origin: float, warmup: float, final: bool = False) \
            -> list[Sample]:
        """Samples of every second finished by `now` (epoch s; all of them when `final`), on
        the run's time axis (`origin`: its t=0, epoch s)."""
        self._read()
        last = max(self._pending, default=-1) if final else int(now - self.start) - GRACE_S
        out: list[Sample] = []
        while self._next <= last:
            out += self._samples(self._next, self._pending.pop(self._next, {}), origin, warmup)
            self._next += 1
        return out

    def _samples(self, sec: int, streams: dict[str, Second], origin: float, warmup: float) \
            -> list[Sample]:
        t = self.start + sec + 1 - origin
        phase = "warmup" if t - 0.5 < warmup else "run"
        w = self.c.workload
        tx = streams.get("tx", Second())

        def sample(name: str, ios: int, lat_sum: float, lat_max: int, hist: Histogram,
                   target: float | None = None, behind: float = 0.0) -> Sample:
            return Sample(name, t, 1.0, ios, 0, lat_sum, lat_max or None, hist, target, behind,
                          phase)

        out = [sample(f"{w}.tx.commit", tx.commits, tx.lat_sum_ns, tx.lat_max_ns, tx.hist,
                      self.c.rate, tx.lag_max_ns / 1e9),
               sample(f"{w}.tx.failed", tx.failed, 0.0, 0, Histogram())]
        if self.c.rate:
            out.append(sample(f"{w}.tx.lag", tx.commits, tx.lag_sum_ns, tx.lag_max_ns, tx.lag))
        for stream in self.c.streams.values():
            s = streams.get(stream, Second())
            out.append(sample(f"{w}.{stream}.commit", s.commits, s.lat_sum_ns, s.lat_max_ns,
                              s.hist))
        return out

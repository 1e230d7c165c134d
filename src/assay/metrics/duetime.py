"""Latency from the due time, for every fixed-rate job (even or Poisson), for runs of any length,
in bounded memory and disk.

fio times latency from the actual submit: when the storage stalls, a rate-limited fio stops
submitting and then bursts to catch up, and the IOs that waited in its schedule never show the
wait (coordinated omission, fio issue #1394). Here:

1. Each fixed-rate job writes fio's issue log (`write_iolog`: the time, in microseconds, and
   size of every IO as fio issues it, about 40 bytes). assay reads it as fio writes it and
   punches what it has read out of the file (fallocate), so the log holds at most a few MiB
   of blocks whatever the run's length, and is removed at the end. A regular file, not a
   pipe: fio never waits for assay, so reading the log cannot slow the load it measures.
2. Each IO's due time comes from the job's schedule, rebuilt exactly (metrics/schedule.py,
   even and Poisson pacing), so its issue lag is exact. The lags are folded into one histogram
   per job and second, stored as the `lags` stream of the run directory (results/blocklog.py).
3. At the end, each second's lags are joined with fio's latency histogram of the same second
   and component: latency from the due time = lag + latency from the submit. Per IO the two
   are not paired in fio's output, so the longest lags go with the shortest latencies: after a
   stall, the IOs that waited in fio's queue are issued to storage that has just recovered,
   and the IOs that sat in the stalled storage were issued on time. The tail is then exact
   to within the latencies from the submit, which are small next to any lag worth reporting.

A job's clock and fio's log clock differ by a constant (the log opens before the job
starts): the smallest lag seen is taken as that offset, since an on-time IO is issued within
microseconds of its due time.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from assay.metrics.histogram import Histogram
from assay.metrics.sampler import ComponentSpec
from assay.metrics.schedule import Schedule
from assay.results.blocklog import BlockLog, read_rows

STREAM = "lags"
IOLOG_SUFFIX = ".iolog"
READ_BYTES = 1 << 20
PUNCH_BYTES = 4 << 20  # free the log's blocks every 4 MiB read (about 100,000 IOs)
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 0x01, 0x02
_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]


def punch(fd: int, start: int, end: int) -> int:
    """Free the blocks of [start, end) of a file fio still appends to (the size, and fio's
    offset, stay): returns the new start. Where the filesystem cannot, the log keeps its
    blocks until the run ends."""
    if _libc.fallocate(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, start,
                       end - start) != 0:
        return start
    return end
LATE_MS = 20.0
ON_TIME_NS = 50_000  # fio sleeps to an IO's due time within tens of microseconds
SLACK_S = 30  # lag rows may come this much out of time order (a job that starts late)


def fio_bucket(ns: float) -> int:
    """fio's bucket value for `ns` (64 buckets per power of two, < 0.8 % apart)."""
    n = int(ns)
    if n < 128:
        return n
    unit = 1 << (n.bit_length() - 7)
    return n // unit * unit


def lag_bucket(ns: int) -> int:
    """A lag, coarser than fio's buckets: under ON_TIME_NS it is fio's own wake-up jitter
    (0: on time), above it 32 buckets per power of two (< 3.2 % low). A second of an on-time
    job is then one bin, and a day of lags stays small."""
    if ns < ON_TIME_NS:
        return 0
    unit = 1 << max(ns.bit_length() - 6, 0)
    return ns // unit * unit


def fio_size(text: str) -> int:
    text = str(text).strip().lower().rstrip("ib")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def fio_time(value: object) -> float:
    """Seconds of a fio time as assay writes them (`10s`, `1500ms`, `250us`, a number)."""
    text = str(value or "0").strip()
    for unit, scale in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text)


def min_block(options: Mapping[str, Any]) -> int:
    if options.get("bssplit"):
        return min(fio_size(part.split("/")[0]) for part in str(options["bssplit"]).split(":"))
    return fio_size(str(options.get("bs") or "4k").split(",")[0].split("-")[0])


@dataclass
class PacedJob:
    """A fixed-rate fio job whose issue log assay reads."""

    name: str
    bps: int
    min_bs: int
    poisson: bool
    thread_number: int
    direction: int  # 0 read, 1 write
    start_s: float = 0.0  # its startdelay: when its second 1 begins on the run's axis

    def schedule(self, randseed: int) -> Schedule:
        return Schedule(self.bps, self.min_bs, self.poisson, randseed, self.thread_number,
                        self.direction)


# fio's issue log of a file engine holds the files' `add` lines only, no operations (3.33)
FILE_ENGINES = ("filecreate", "filestat", "filedelete", "dircreate", "dirstat", "dirdelete")


def paced_jobs(jobs: Mapping[str, Mapping[str, Any]]) -> dict[str, PacedJob]:
    """The jobs (name -> options, in job-file order) whose due times can be rebuilt: a fixed
    rate, one direction, one clone. fio numbers jobs from 1 in file order, clones included."""
    out: dict[str, PacedJob] = {}
    number = 0
    for name, o in jobs.items():
        clones = int(o.get("numjobs") or 1)
        number += 1
        this, number = number, number + clones - 1
        rw = str(o.get("rw") or o.get("readwrite") or "read")
        if clones > 1 or "rw" in rw.replace("write", "") or "trim" in rw:
            continue
        if str(o.get("ioengine") or "") in FILE_ENGINES:
            continue
        rate, iops = o.get("rate"), o.get("rate_iops")
        if not rate and not iops or "," in str(rate or iops):
            continue
        bs = min_block(o)
        bps = fio_size(str(rate)) if rate else int(float(str(iops))) * bs
        process = str(o.get("rate_process") or "linear")
        if bps <= 0 or process not in ("linear", "poisson"):
            continue
        out[name] = PacedJob(name, bps, bs, process == "poisson", this,
                             1 if "write" in rw else 0, fio_time(o.get("startdelay")))
    return out


@dataclass
class _Job:
    paced: PacedJob
    schedule: Schedule
    path: Path
    fh: BinaryIO | None = None
    punched: int = 0  # bytes of the log already freed
    rest: bytes = b""
    offset: int | None = None  # log clock - schedule clock (µs)
    pending: tuple[int, int, bytes] | None = None  # the last IO: issued, due, offset
    seconds: dict[int, dict[int, int]] = field(default_factory=dict)  # second -> lag bins
    newest: int = 0


class IssueLogReader:
    """Reads the fixed-rate jobs' issue logs as fio writes them, and folds them into
    per-second lag histograms (the `lags` stream)."""

    def __init__(self, workdir: Path, run_dir: Path, jobs: Mapping[str, PacedJob],
                 randseed: int):
        self.log = BlockLog(run_dir, STREAM)
        self._jobs: list[_Job] = []
        for name, paced in jobs.items():
            path = workdir / f"{name}{IOLOG_SUFFIX}"
            path.unlink(missing_ok=True)
            self._jobs.append(_Job(paced, paced.schedule(randseed), path))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="issue-logs", daemon=True)
        self.error: str | None = None

    def start(self) -> IssueLogReader:
        self._thread.start()
        return self

    def finish(self) -> None:
        """After fio ended: read what is left, store every second, remove the logs."""
        self._stop.set()
        self._thread.join()  # a finite file: it ends
        for job in self._jobs:
            with contextlib.suppress(Exception):
                if job.pending is not None:
                    self._count(job, job.pending[0], job.pending[1])
        self._flush(None)
        for job in self._jobs:
            if job.fh:
                job.fh.close()
            job.path.unlink(missing_ok=True)
        self.log.close()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            for job in self._jobs:
                self._read(job)
            self._flush(self._watermark())
        for job in self._jobs:  # the last lines fio wrote before it ended
            self._read(job)

    def _watermark(self) -> float:
        """The last second every started job is past (fio buffers its log: a slow job's lines
        come late), so that the stream stays in time order."""
        started = [j.newest + j.paced.start_s for j in self._jobs if j.newest]
        return min(started, default=0.0) - 2
    def _read(self, job: _Job) -> None:
        """The lines fio added since the last read; what was read is punched out of the file,
        so its blocks are freed as the run goes."""
        if job.fh is None:
            try:
                job.fh = open(job.path, "rb")  # noqa: SIM115 - held while fio writes
            except FileNotFoundError:
                return  # fio has not opened it yet
        chunk = job.fh.read(READ_BYTES)
        while chunk:
            if not self.error:
                lines = (job.rest + chunk).split(b"\n")
                job.rest = lines.pop()
                try:
                    self._fold(job, lines)
                except Exception as e:  # noqa: BLE001 - said in the result, never fatal
                    self.error = f"{type(e).__name__}: {e}"
            if job.fh.tell() - job.punched >= PUNCH_BYTES:
                job.punched = punch(job.fh.fileno(), job.punched, job.fh.tell())
            chunk = job.fh.read(READ_BYTES)

    def _fold(self, job: _Job, lines: list[bytes]) -> None:
        """Each logged IO's lag from its due time, into its second's histogram. fio logs an
        IO each time it tries to queue it: when the engine says busy, the same IO comes again
        at once (same offset and size). Only its last try is the IO; under even pacing the
        busy try did not advance the schedule, under Poisson it drew a gap all the same."""
        due = job.schedule.due
        poisson = job.paced.poisson
        for line in lines:
            parts = line.split()
            if len(parts) != 5 or parts[2] not in (b"read", b"write"):
                continue  # the version line, file add/open/close
            issued, key, size = int(parts[0]), parts[3], int(parts[4])
            if job.pending is not None and job.pending[2] == key:  # a retry after busy
                job.pending = (issued, due(size) if poisson else job.pending[1], key)
                continue
            if job.pending is not None:
                self._count(job, job.pending[0], job.pending[1])
            job.pending = (issued, due(size), key)

    def _count(self, job: _Job, issued: int, due: int) -> None:
        raw = issued - due
        if job.offset is None or raw < job.offset:
            job.offset = raw
        second = (issued - job.offset) // 1_000_000 + 1  # on the job's own clock
        bins = job.seconds.get(second)
        if bins is None:
            bins = job.seconds[second] = {}
            job.newest = max(job.newest, second)
        key = lag_bucket((raw - job.offset) * 1000)
        bins[key] = bins.get(key, 0) + 1

    def _flush(self, upto: float | None) -> None:
        """Store the seconds no later IO can fall in (all of them at the end), in order."""
        rows: list[dict[str, Any]] = []
        for job in self._jobs:
            for sec in [s for s in job.seconds
                        if upto is None or s + job.paced.start_s <= upto]:
                rows.append({"t": float(sec) + job.paced.start_s, "c": job.paced.name,
                             "bins": job.seconds.pop(sec)})
        rows.sort(key=lambda r: r["t"])
        self.log.append(rows)


def pair(service: Mapping[int, int], lags: Mapping[int, int]) -> Histogram:
    """Latency from the due time of one second: the longest lags with the shortest latencies
    from the submit (see the module docstring); IOs without a partner keep their own value."""
    out: dict[int, int] = {}
    s_items = sorted(service.items())
    l_items = sorted(lags.items(), reverse=True)
    i = j = 0
    s_left = s_items[0][1] if s_items else 0
    l_left = l_items[0][1] if l_items else 0
    while i < len(s_items) and j < len(l_items):
        n = min(s_left, l_left)
        key = fio_bucket(s_items[i][0] + l_items[j][0])
        out[key] = out.get(key, 0) + n
        s_left -= n
        l_left -= n
        if not s_left:
            i += 1
            s_left = s_items[i][1] if i < len(s_items) else 0
        if not l_left:
            j += 1
            l_left = l_items[j][1] if j < len(l_items) else 0
    while i < len(s_items):
        out[s_items[i][0]] = out.get(s_items[i][0], 0) + s_left
        i += 1
        s_left = s_items[i][1] if i < len(s_items) else 0
    while j < len(l_items):
        out[l_items[j][0]] = out.get(l_items[j][0], 0) + l_left
        j += 1
        l_left = l_items[j][1] if j < len(l_items) else 0
    return Histogram(out)


def _by_second(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Rows grouped by their whole second, in order."""
    group: list[dict[str, Any]] = []
    current: int | None = None
    for r in rows:
        s = round(float(r["t"]))
        if current is not None and s != current:
            yield current, group
            group = []
        current = s
        group.append(r)
    if current is not None:
        yield current, group


def due_latency(run_dir: Path, components: Mapping[str, tuple[list[str], float, float]]) \
        -> dict[str, dict[str, float | None]]:
    """component -> latency from the due time over its window, for components whose every
    job has a lags stream. `components`: name -> (its jobs, window start, window end)."""
    jobs_seen: set[str] = set()
    lag_rows: dict[int, dict[str, dict[int, int]]] = {}  # second -> job -> lag bins
    hists = {c: Histogram() for c in components}
    lag_iter = iter(read_rows(run_dir, STREAM))
    pending = next(lag_iter, None)
    for second, samples in _by_second(read_rows(run_dir, "samples")):
        while pending is not None and pending["t"] <= second + SLACK_S:
            per_job = lag_rows.setdefault(round(pending["t"]), {}).setdefault(pending["c"], {})
            for k, v in pending["bins"].items():
                per_job[int(k)] = per_job.get(int(k), 0) + v
            jobs_seen.add(pending["c"])
            pending = next(lag_iter, None)
        lags_now = lag_rows.pop(second, {})
        for stale in [s for s in lag_rows if s < second]:  # seconds no sample ended in
            lag_rows.pop(stale)
        for s in samples:
            spec = components.get(s["c"])
            if spec is None:
                continue
            jobs, lo, hi = spec
            if not lo <= s["t"] - s["dt"] / 2 <= hi:
                continue
            lags: dict[int, int] = {}
            for j in jobs:
                for k, v in (lags_now.get(j) or {}).items():
                    lags[k] = lags.get(k, 0) + v
            service = {int(k): v for k, v in (s.get("bins") or {}).items()}
            hists[s["c"]].add(pair(service, lags))
    out: dict[str, dict[str, float | None]] = {}
    for c, (jobs, _, _) in components.items():
        h = hists[c]
        if not h or not set(jobs) <= jobs_seen:
            continue
        pct = h.percentiles((50.0, 99.0, 99.9))
        out[c] = {"lat_intended_p50_ms": (pct[50.0] or 0) / 1e6,
                  "lat_intended_p99_ms": (pct[99.0] or 0) / 1e6,
                  "lat_intended_p999_ms": (pct[99.9] or 0) / 1e6,
                  "lat_intended_max_ms": (h.max or 0) / 1e6,
                  "late_20ms_pct": 100.0 * h.fraction_above(LATE_MS * 1e6)}
    return out


class JobOptions(Protocol):
    @property
    def options(self) -> Mapping[str, object]: ...


class Timed(Protocol):
    """What due_windows reads of a plan (plan/model.py's Plan), without importing plan."""

    @property
    def jobs(self) -> Mapping[str, JobOptions]: ...
    @property
    def specs(self) -> Sequence[ComponentSpec]: ...
    @property
    def warmup(self) -> float: ...
    @property
    def total_seconds(self) -> float: ...


def due_windows(plan: Timed) -> dict[str, tuple[list[str], float, float]]:
    """Components whose every job is fixed-rate and logs its issues (the per-database views
    of a workload too): name -> (jobs, window)."""
    jobs = plan.jobs
    out = {}
    for spec in plan.specs:
        if spec.jobs and all(n in jobs and "write_iolog" in jobs[n].options
                             for n in spec.jobs):
            lo = max(plan.warmup, spec.start_s)
            hi = min(plan.total_seconds, spec.end_s) if spec.end_s is not None \
                else plan.total_seconds
            out[spec.component] = (list(spec.jobs), lo, hi)
    return out

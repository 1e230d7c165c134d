"""`issuelog SPEC`: each fixed-rate job's lag behind its schedule, per second, read from fio's
issue logs on the host as fio writes them (the host half of latency from the due time).

SPEC is a JSON file in the working directory (the controller writes it there):

    {"jobs": [{"name": "db.data.1.read.8k", "log": "n1.0.db.data.1.read.8k.iolog",
               "bps": 2064384, "min_bs": 8192, "poisson": false, "randseed": 1,
               "thread_number": 1, "direction": 0, "start_s": 0.0}, ...]}

1. Each job's issue log (fio's `write_iolog`: the microsecond and size of every IO as fio
   issues it, about 40 bytes) is read as fio appends to it, and what was read is punched out
   of the file (fallocate), so it holds at most a few MiB of blocks whatever the run's length;
   the logs are removed at the end. A regular file, not a pipe: fio never waits for this
   program, so reading cannot slow the load it measures.
2. Each IO's due time comes from the job's schedule, rebuilt exactly (schedule.py, even and
   Poisson pacing), so its lag is exact. A job's clock and its log's differ by a constant (the
   log opens before the job starts): the smallest lag seen is taken as that offset, since an
   on-time IO is issued within microseconds of its due time.
3. The lags are folded into one histogram per job and second. A second is written once no
   later IO can fall in it: one line per job and second, `{"t", "c", "bins", "ios"}` (t on the
   run's axis: the job's second plus its start delay; bins: lag in ns -> IOs), never per-IO
   data. The last line is `{"end": true, "ios": {log: IOs}, "error": ...}`.

It ends when its stdin, a pipe from the controller, closes (fio has ended: the controller
says so) or on SIGTERM (over SSH: the session's end, hosts/ssh.py), after reading what fio
wrote last.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, BinaryIO

from .schedule import Schedule
from .stopping import stop_event

READ_BYTES = 1 << 20
PUNCH_BYTES = 4 << 20  # free the log's blocks every 4 MiB read (about 100,000 IOs)
ON_TIME_NS = 50_000  # fio sleeps to an IO's due time within tens of microseconds
POLL_S = 0.25
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 0x01, 0x02


def _fallocate() -> Any:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                                   ctypes.c_longlong]
        return libc.fallocate
    except (ImportError, OSError, AttributeError):
        return None  # no punching: the log keeps its blocks until the run ends


_FALLOCATE = _fallocate()


def punch(fd: int, start: int, end: int) -> int:
    """Free the blocks of [start, end) of a file fio still appends to (the size, and fio's
    offset, stay): returns the new start. Where the filesystem cannot, the log keeps its
    blocks until the run ends."""
    if _FALLOCATE is None or _FALLOCATE(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE,
                                        start, end - start) != 0:
        return start
    return end


def lag_bucket(ns: int) -> int:
    """A lag, coarser than fio's buckets: under ON_TIME_NS it is fio's own wake-up jitter
    (0: on time), above it 32 buckets per power of two (< 3.2 % low). A second of an on-time
    job is then one bin, and a day of lags stays small."""
    if ns < ON_TIME_NS:
        return 0
    unit = 1 << max(ns.bit_length() - 6, 0)
    return ns // unit * unit


class Job:
    """One fixed-rate job: its log as read so far and its seconds not yet written."""

    def __init__(self, spec: dict[str, Any]):
        self.name = str(spec["name"])
        self.path = str(spec["log"])
        self.start_s = float(spec.get("start_s") or 0.0)
        self.poisson = bool(spec.get("poisson"))
        self.schedule = Schedule(int(spec["bps"]), int(spec["min_bs"]), self.poisson,
                                 int(spec.get("randseed") or 0),
                                 int(spec.get("thread_number") or 1),
                                 int(spec.get("direction") or 0))
        self.fh: BinaryIO | None = None
        self.punched = 0  # bytes of the log already freed
        self.rest = b""
        self.offset: int | None = None  # log clock - schedule clock (µs)
        self.pending: tuple[int, int, bytes] | None = None  # the last IO: issued, due, offset
        self.seconds: dict[int, dict[int, int]] = {}  # second -> lag bins
        self.newest = 0
        self.ios = 0


class Reader:
    """The jobs' logs, folded into per-second lag histograms."""

    def __init__(self, jobs: list[dict[str, Any]]):
        self.jobs = [Job(j) for j in jobs]
        self.error: str | None = None

    def read(self) -> None:
        for job in self.jobs:
            self._read(job)

    def _read(self, job: Job) -> None:
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
                except Exception as e:  # noqa: BLE001 - said in the last line, never fatal
                    self.error = f"{job.name}: {type(e).__name__}: {e}"
            if job.fh.tell() - job.punched >= PUNCH_BYTES:
                job.punched = punch(job.fh.fileno(), job.punched, job.fh.tell())
            chunk = job.fh.read(READ_BYTES)

    def _fold(self, job: Job, lines: list[bytes]) -> None:
        """Each logged IO's lag from its due time, into its second's histogram. fio logs an
        IO each time it tries to queue it: when the engine says busy, the same IO comes again
        at once (same offset and size). Only its last try is the IO; under even pacing the
        busy try did not advance the schedule, under Poisson it drew a gap all the same."""
        due = job.schedule.due
        poisson = job.poisson
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

    def _count(self, job: Job, issued: int, due: int) -> None:
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
        job.ios += 1

    def watermark(self) -> float:
        """The last second every started job is past (fio buffers its log: a slow job's lines
        come late), so that the rows come in time order."""
        started = [j.newest + j.start_s for j in self.jobs if j.newest]
        return min(started, default=0.0) - 2

    def rows(self, upto: float | None) -> list[dict[str, Any]]:
        """The seconds no later IO can fall in (all of them when `upto` is None), in order."""
        out: list[dict[str, Any]] = []
        for job in self.jobs:
            for sec in sorted(s for s in job.seconds
                              if upto is None or s + job.start_s <= upto):
                bins = job.seconds.pop(sec)
                out.append({"t": float(sec) + job.start_s, "c": job.name,
                            "bins": bins, "ios": sum(bins.values())})
        out.sort(key=lambda r: r["t"])
        return out

    def finish(self) -> list[dict[str, Any]]:
        """After fio ended: what it wrote last, every second left, the logs removed."""
        self.read()
        for job in self.jobs:
            if job.pending is not None:
                with contextlib.suppress(Exception):
                    self._count(job, job.pending[0], job.pending[1])
                job.pending = None
        rows = self.rows(None)
        for job in self.jobs:
            if job.fh is not None:
                job.fh.close()
            with contextlib.suppress(OSError):
                os.unlink(job.path)
        return rows


def _write(rows: list[dict[str, Any]]) -> None:
    if rows:
        sys.stdout.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
        sys.stdout.flush()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: agent.pyz issuelog SPEC.json", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as fh:
            reader = Reader(json.load(fh)["jobs"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"issuelog: cannot read {argv[0]}: {e}", file=sys.stderr)
        return 2
    stop = stop_event()
    try:
        while not stop.wait(POLL_S):
            reader.read()
            _write(reader.rows(reader.watermark()))
        _write(reader.finish())
        _write([{"end": True, "ios": {j.path: j.ios for j in reader.jobs},
                 "error": reader.error}])
    except BrokenPipeError:  # the controller went away: nobody to tell
        return 1
    return 0

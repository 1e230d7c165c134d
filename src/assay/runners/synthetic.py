"""A fio that runs for as long as asked in no time: synthetic json+ status dumps for the jobs
of the run's own job file, generated one second at a time (bench/long_run.py drives a day
through the engine with it).

Each job completes its fixed rate every second (`rate_iops`, or `rate` over the block size);
latencies follow a log-normal shape over fio's own buckets (64 per power of two), drifting
over the day, with a rare one-second spike. Dumps are cumulative, as fio's are, and made as
they are read: the stream is never held in memory.
"""

from __future__ import annotations

import configparser
import math
import random
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.metrics.duetime import fio_bucket
from assay.runners.base import CommandResult, Document, FioRunBase
from assay.runners.local import LocalRunner


@dataclass
class Direction:
    per_second: float
    size: int
    ios: int = 0
    bytes: int = 0
    lat_sum: float = 0.0
    lat_max: int = 0
    bins: dict[int, int] = field(default_factory=dict)


def fio_size(text: str) -> int:
    """fio's sizes: `8k`, `256k`, `1048576` (k and m are powers of 1024)."""
    text = text.strip().lower().rstrip("ib")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def read_jobs(text: str) -> dict[str, dict[str, Direction]]:
    """job -> direction -> its per-second rate, from a rendered job file."""
    parser = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None,
                                       delimiters=("=",), comment_prefixes=(";", "#"))
    parser.read_string(text)
    jobs: dict[str, dict[str, Direction]] = {}
    for name in parser.sections():
        if name == "global":
            continue
        o = parser[name]
        bs = fio_size((o.get("bs") or o.get("bssplit") or "8k").split("/")[0].split(",")[0])
        if o.get("rate_iops"):
            rate = float(str(o["rate_iops"]).split(",")[0])
        elif o.get("rate"):
            rate = fio_size(str(o["rate"]).split(",")[0]) / bs
        else:
            rate = 1000.0  # closed loop: as much as a small device gives
        rw = o.get("rw") or o.get("readwrite") or "read"
        mix = float(o.get("rwmixread") or 50) / 100
        dirs = {}
        if "read" in rw or "rw" in rw:
            dirs["read"] = Direction(rate * (mix if "rw" in rw else 1.0), bs)
        if "write" in rw or "rw" in rw and "read" not in rw:
            dirs["write"] = Direction(rate * ((1 - mix) if "rw" in rw else 1.0), bs)
        jobs[name] = dirs or {"read": Direction(rate, bs)}
    return jobs


# a log-normal latency shape over fio's buckets: (bucket, fraction), median 0.8 ms
_SHAPE = [(fio_bucket(800_000 * math.exp(0.5 * z)), math.exp(-z * z / 2))
          for z in (x / 4 for x in range(-12, 13))]
_TOTAL = sum(w for _, w in _SHAPE)


class SyntheticRun(FioRunBase):
    def __init__(self, jobs: dict[str, dict[str, Direction]], seconds: int, seed: int = 1):
        self._jobs = jobs
        self._seconds = seconds
        self._rng = random.Random(seed)
        self._started = time.time()
        self._stopped = False
        self._last: Document | None = None
        self.now = self._started

    @property
    def started(self) -> float:
        return self._started

    @property
    def last_doc(self) -> Document | None:
        return self._last

    def _second(self, t: int) -> Document:
        rng = self._rng
        drift = 1 + 0.3 * math.sin(2 * math.pi * t / 86_400)
        jobs = []
        for name, dirs in self._jobs.items():
            doc: dict[str, object] = {"jobname": name, "job_runtime": t * 1000}
            for d, acc in dirs.items():
                n = max(0, round(acc.per_second + rng.gauss(0, 1)))
                left = n
                for i, (bucket, w) in enumerate(_SHAPE):
                    k = left if i == len(_SHAPE) - 1 else min(left, round(n * w / _TOTAL))
                    if k:
                        key = fio_bucket(bucket * drift)
                        acc.bins[key] = acc.bins.get(key, 0) + k
                        acc.lat_sum += key * k
                        left -= k
                if n and rng.random() < 1e-4:  # a rare stalled IO
                    acc.bins[1_002_438_656] = acc.bins.get(1_002_438_656, 0) + 1
                    acc.lat_sum += 1_002_438_656
                    acc.lat_max = max(acc.lat_max, 1_002_438_656)
                    n += 1
                acc.ios += n
                acc.bytes += n * acc.size
                acc.lat_max = max(acc.lat_max, max(acc.bins, default=0))
                doc[d] = {"io_bytes": acc.bytes, "total_ios": acc.ios,
                          "lat_ns": {"N": acc.ios, "mean": acc.lat_sum / acc.ios if acc.ios
                                     else 0.0, "max": acc.lat_max,
                                     "bins": {str(k): v for k, v in acc.bins.items()}}}
            jobs.append(doc)
        return {"timestamp_ms": (self._started + t) * 1000, "jobs": jobs}

    def documents(self, poll: float = 0.2) -> Iterator[Document | None]:
        for t in range(1, self._seconds + 1):
            if self._stopped:
                return
            self._last = self._second(t)
            self.now = self._started + t
            yield self._last

    def stop(self) -> None:
        self._stopped = True

    def wait(self) -> int:
        return 0

    def stderr_tail(self, lines: int = 5) -> str:
        return ""


class SyntheticRunner(LocalRunner):
    """A LocalRunner whose fio is a SyntheticRun of `seconds` (prefill jobs do nothing)."""

    def __init__(self, seconds: int, host: str, workdir: Path, seed: int = 1):
        super().__init__(host, workdir)
        self.seconds = seconds
        self.seed = seed
        self.run_: SyntheticRun | None = None

    def clock(self) -> float:
        return self.run_.now if self.run_ else time.time()

    def check_job(self, name: str, env: Mapping[str, str]) -> str | None:
        return None

    def start(self, name: str, env: Mapping[str, str], *, at: float | None = None,
              sections: Sequence[str] = ()) -> SyntheticRun:
        jobs = {} if sections else read_jobs((self.workdir / name).read_text(encoding="utf-8"))
        run = SyntheticRun(jobs, self.seconds if jobs else 0, self.seed)
        if jobs:
            self.run_ = run
        return run

    def fetch_logs(self) -> list[Path]:
        return []

    def run(self, argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
        return CommandResult(0, "", "")

"""What every workload kind builds on: streams of IO, their fio jobs and their components.

A workload (e.g. `mail`, kind exchange) is made of streams (`db`, `log`, `bdm`); a stream has
data files and fio jobs; each direction of a stream is a graded component (`mail.db.read`).

Fixed-rate streams get one fio job per (file, direction, block size). fio paces `linear` rates
in bytes at the *smallest* block size of a `bssplit`, which under-delivers mixed sizes (8k/32k
at 500 IOPS gave 385), and `randrw` splits rates badly; single-size jobs make both exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.fio.jobfile import FioJob, Options
from assay.metrics.sampler import ComponentSpec
from assay.scenario.models import WorkloadBase

SEQUENTIAL = {"read": "read", "write": "write"}
RANDOM = {"read": "randread", "write": "randwrite"}


@dataclass
class DataFile:
    name: str  # relative to the target directory
    size: int
    # a set of `count` files of size / count each, `name` a fio filename_format with
    # $filenum (the small files of a build): the prefill lays them out in one fio job
    count: int = 1

    def member(self, i: int) -> str:
        return self.name.replace("$filenum", str(i)) if self.count > 1 else self.name


@dataclass
class Pattern:
    """The IO shape of one stream."""

    block_sizes: list[tuple[int, float]]  # (bytes, percent of IOs)
    read_pct: float  # 0..100
    random: bool = True
    percentage_random: int | None = None  # mostly-sequential streams (logs): share of random IO
    iodepth: int = 8
    sync: bool = False  # O_DSYNC writes (write-through logs)
    target_iops: float | None = None  # whole stream, both directions; None = closed loop
    threads: int = 1  # closed loop: jobs per file

    @property
    def mean_block(self) -> float:
        return sum(bs * pct for bs, pct in self.block_sizes) / 100.0

    def bssplit(self) -> str:
        return ":".join(f"{format_fio_size(bs)}/{pct:g}" for bs, pct in self.block_sizes)


@dataclass
class Stream:
    workload: str
    name: str
    files: list[DataFile]
    jobs: list[FioJob]
    components: list[ComponentSpec]
    transactional: bool = True  # counts toward the workload's target (Jetstress' definition)
    description: str = ""

    @property
    def key(self) -> str:
        return f"{self.workload}.{self.name}"


@dataclass
class BuildContext:
    """What a kind needs to know about the run to write its jobs."""

    seed: int = 1
    duration: float = 60.0  # measured seconds
    duration_overridden: bool = False  # set on the command line: it wins over per-kind times
    warmup: float = 0.0
    notes: list[str] = field(default_factory=list)  # warnings that teach, shown in the plan


def format_fio_size(n: int) -> str:
    for unit, mult in (("m", 1 << 20), ("k", 1 << 10)):
        if n % mult == 0 and n >= mult:
            return f"{n // mult}{unit}"
    return str(n)


def split_files(workload: str, stream: str, total: int, count: int, minimum: int = 1 << 20) \
        -> list[DataFile]:
    """`count` equal files holding `total` bytes, rounded to whole MiB."""
    per = max(minimum, (total // max(count, 1)) // (1 << 20) * (1 << 20))
    return [DataFile(f"{workload}.{stream}.{i + 1}.dat", per) for i in range(count)]


def data_options(params: WorkloadBase) -> Options:
    """Written data that compresses and dedupes as the scenario says."""
    opts: Options = {}
    comp = params.data.compressibility
    dedupe = params.data.dedupe
    if comp > 1.0:
        opts["buffer_compress_percentage"] = round((1 - 1 / comp) * 100)
        opts["buffer_compress_chunk"] = 4096
    if dedupe > 1.0:
        opts["dedupe_percentage"] = round((1 - 1 / dedupe) * 100)
    # fresh buffers for every write: reused buffers would dedupe on any platform
    opts["refill_buffers"] = True
    return opts


def access_options(params: WorkloadBase) -> Options:
    a = params.access
    if a.distribution == "uniform":
        return {"random_distribution": "random", "norandommap": True}
    if a.distribution == "zipf":
        return {"random_distribution": f"zipf:{a.theta or 1.2:g}"}
    if a.distribution == "pareto":
        return {"random_distribution": f"pareto:{a.theta or 0.9:g}"}
    return {"random_distribution":
            f"zoned:{a.hot_io:g}/{a.hot_data:g}:{100 - a.hot_io:g}/{100 - a.hot_data:g}"}


def _block_options(pattern: Pattern) -> Options:
    if len(pattern.block_sizes) > 1:
        return {"bssplit": pattern.bssplit()}
    return {"bs": format_fio_size(pattern.block_sizes[0][0])}


def merge_streams(first: Stream, *others: Stream) -> Stream:
    """One stream whose directions have different shapes (VDI reads vs writes)."""
    for o in others:
        first.files += [f for f in o.files if f not in first.files]
        first.jobs += o.jobs
        first.components += o.components
    return first


def _allocate(total: float, parts: int) -> list[float]:
    """Split a rate over `parts` jobs as whole IOPS (largest remainder) for Poisson pacing."""
    base = [total / parts] * parts
    floors = [int(x) for x in base]
    short = round(total) - sum(floors)
    order = sorted(range(parts), key=lambda i: base[i] - floors[i], reverse=True)
    for i in order[:max(short, 0)]:
        floors[i] += 1
    return [float(x) for x in floors]


def build_stream(workload: str, name: str, params: WorkloadBase, files: list[DataFile],
                 pattern: Pattern, *, transactional: bool = True, description: str = "",
                 extra: Options | None = None) -> Stream:
    """The fio jobs and graded components of one stream."""
    fixed = pattern.target_iops is not None and params.load.model != "closed"
    directions = [d for d, share in (("read", pattern.read_pct), ("write", 100 - pattern.read_pct))
                  if share > 0]
    jobs: list[FioJob] = []
    feeds: dict[str, list[str]] = {d: [] for d in directions}
    targets: dict[str, float | None] = dict.fromkeys(directions)
    iodepth = params.load.iodepth or pattern.iodepth
    common: Options = {"iodepth": iodepth}
    if pattern.random:
        common.update(access_options(params))
    if pattern.percentage_random is not None:
        common["percentage_random"] = pattern.percentage_random
    if pattern.sync:
        common["sync"] = "dsync"
    common.update(extra or {})
    if fixed:
        assert pattern.target_iops is not None
        scaled = pattern.target_iops * params.load.scale
        poisson = params.load.pacing == "poisson"
        for d in directions:
            share = pattern.read_pct if d == "read" else 100 - pattern.read_pct
            targets[d] = scaled * share / 100.0
            # random streams: one job per block size (exact rates); sequential streams: one
            # append stream per file, paced in bytes at the mean block size
            sizes = pattern.block_sizes if pattern.random else [(0, 100.0)]
            for bs, pct in sizes:
                rate = scaled * share / 100.0 * pct / 100.0
                rates = _allocate(rate, len(files)) if poisson else [rate / len(files)] * len(files)
                for i, (f, r) in enumerate(zip(files, rates, strict=True)):
                    if r <= 0:
                        continue
                    if bs:
                        shape: Options = {"rw": RANDOM[d], "bs": format_fio_size(bs)}
                        mean = float(bs)
                    else:
                        shape = {"rw": (RANDOM if pattern.percentage_random else SEQUENTIAL)[d],
                                 **_block_options(pattern)}
                        mean = pattern.mean_block
                    suffix = f".{format_fio_size(bs)}" if bs else ""
                    job = FioJob(f"{workload}.{name}.{i + 1}.{d}{suffix}", {
                        "filename": f.name, "size": f.size, **shape,
                        # poisson counts whole IOs; linear paces bytes, exact for any fraction
                        **({"rate_iops": int(r), "rate_process": "poisson"} if poisson
                           else {"rate": max(1, round(r * mean)), "rate_process": "linear"}),
                        **common,
                        **(data_options(params) if d == "write" else {}),
                    })
                    jobs.append(job)
                    feeds[d].append(job.name)
    else:
        rw = ("randrw" if pattern.random or pattern.percentage_random else "rw") \
            if len(directions) == 2 else (RANDOM if pattern.random or pattern.percentage_random
                                          else SEQUENTIAL)[directions[0]]
        threads = params.load.threads or pattern.threads
        for i, f in enumerate(files):
            job = FioJob(f"{workload}.{name}.{i + 1}", {
                "filename": f.name, "size": f.size, "rw": rw,
                **({"rwmixread": f"{pattern.read_pct:g}"} if len(directions) == 2 else {}),
                **_block_options(pattern),
                **({"numjobs": threads} if threads > 1 else {}),
                **common,
                **(data_options(params) if "write" in directions else {}),
            })
            jobs.append(job)
            for d in directions:
                feeds[d].append(job.name)
    poisson = fixed and params.load.pacing == "poisson"
    components = [ComponentSpec(f"{workload}.{name}.{d}", feeds[d], d, targets[d], poisson,
                                paced=fixed) for d in directions]
    desc = description or f"{pattern.bssplit()} {'random' if pattern.random else 'sequential'}"
    return Stream(workload, name, files, jobs, components, transactional, desc)



"""File and metadata operations counted in business units (SPEC-like builds, job sets): each
operation of each unit is its own fio job at its own fixed rate, on that unit's own files, so
the data set is a function of the units only (never of the jobs).

Metadata operations use fio's file engines (`filestat`, `filecreate`, `filedelete`); data
operations read or write whole files at random (`block` None) or in sequential pieces. The
prefill lays each unit's file sets out once (one fio job per set); creates use fresh names,
removed when the run ends; deletes take files the prefill laid out, enough for the whole run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assay.fio.jobfile import FioJob, Options
from assay.metrics.sampler import ComponentSpec
from assay.scenario.models import WorkloadBase
from assay.workloads.base import BuildContext, DataFile, Stream, data_options, format_fio_size

META_FILE = 4096
SPARE = 1.2  # fresh names for creates and deletes beyond rate x time


@dataclass(frozen=True)
class Op:
    rate: float  # op/s per unit
    engine: str  # fio file engine, or "" for data IO
    direction: str  # "read" or "write": the component's direction
    what: str
    files: str = ""  # the unit's file set it works on ("" for create and delete)
    block: int | None = None  # bytes per IO, sequential within a file; None: whole files


def op_streams(name: str, p: WorkloadBase, ctx: BuildContext, units: int, unit: str,
               ops: dict[str, Op], sets: dict[str, tuple[int, int]]) -> list[Stream]:
    """The streams of `units` units; `sets` maps a file set to (files per unit, file size)."""
    seconds = ctx.warmup + ctx.duration
    pacing = "poisson" if p.load.pacing == "poisson" else "linear"
    streams: list[Stream] = []
    for op, o in ops.items():
        per = max(1, round(o.rate * p.load.scale))  # fio's rate_iops is whole IOs a second
        fresh = math.ceil(per * seconds * SPARE) + 1  # creates and deletes never run out
        jobs: list[FioJob] = []
        files: list[DataFile] = []
        for u in range(1, units + 1):
            prefix = f"{name}.{unit}{u}"
            count, size = sets[o.files] if o.files else (fresh, META_FILE)
            fileset = DataFile(f"{prefix}.{o.files or op}.$filenum", count * size, count)
            if o.engine != "filecreate":  # the prefill lays out every set but new names
                files.append(fileset)
            opts: Options = {
                "rate_iops": per, "rate_process": pacing, "openfiles": 1,
                "rw": o.direction, "iodepth": 1, "filename_format": fileset.name,
                "nrfiles": count, "filesize": size, "size": count * size,
                "bs": format_fio_size(o.block or size)}
            if o.files:  # creates and deletes go through their names in order, once each
                opts["file_service_type"] = "sequential" if o.block else "random"
            if o.engine:  # a metadata operation: fio counts it as one IO of a whole file
                opts["ioengine"] = o.engine
            if o.engine == "filecreate":
                opts["unlink"] = 1  # its files are the run's own: gone when it ends
            if o.direction == "write" and not o.engine:
                opts.update(data_options(p))
            jobs.append(FioJob(f"{name}.{op}.{u}", opts))
        spec = ComponentSpec(f"{name}.{op}.{o.direction}", [j.name for j in jobs], o.direction,
                             target_iops=per * units, poisson=pacing == "poisson")
        streams.append(Stream(name, op, files, jobs, [spec], description=o.what))
    return streams

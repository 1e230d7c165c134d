"""Four corners: 8k random read, 8k random write, 1 MiB sequential read and write, as phases.

The "hero numbers" every vendor quotes, run one after another (fio `stonewall`), as fast as
they go, with the same files. X-Ray uses iodepth 128 per disk.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.fio.jobfile import fio_seconds
from assay.scenario.models import Duration, WorkloadBase
from assay.workloads.base import BuildContext, Pattern, Stream, build_stream, split_files

Corner = Literal["randread", "randwrite", "seqread", "seqwrite"]
ALL_CORNERS: tuple[Corner, ...] = ("randread", "randwrite", "seqread", "seqwrite")
CORNERS: dict[str, tuple[list[tuple[int, float]], float, bool]] = {
    "randread": ([(8192, 100)], 100, True),
    "randwrite": ([(8192, 100)], 0, True),
    "seqread": ([(1 << 20, 100)], 100, False),
    "seqwrite": ([(1 << 20, 100)], 0, False),
}


class Params(WorkloadBase):
    kind: Literal["micro"] = "micro"
    corners: list[Corner] = Field(default_factory=lambda: list(ALL_CORNERS))
    phase: Duration | None = Field(None, gt=0, description="seconds per corner; default: the "
                                                           "timeline duration / corners")
    files: int = Field(2, ge=1, le=64)


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    files = split_files(name, "corner", 2 << 30 if p.dataset is None else p.dataset, p.files)
    params = p.model_copy(update={"load": p.load.model_copy(
        update={"model": "closed", "iodepth": p.load.iodepth or 32})})
    phase = phase_seconds(p, ctx)
    streams = []
    for n, corner in enumerate(p.corners):
        sizes, read_pct, random = CORNERS[corner]
        s = build_stream(name, corner, params, files, Pattern(sizes, read_pct, random=random),
                         description=corner)
        s.jobs[0].options["stonewall"] = True  # each corner waits for the previous one
        start = ctx.warmup + n * phase
        for job in s.jobs:
            job.options["runtime"] = fio_seconds(phase + (ctx.warmup if n == 0 else 0))
        for c in s.components:
            c.start_s, c.end_s = start, start + phase
        streams.append(s)
    return streams


def phase_seconds(p: Params, ctx: BuildContext) -> float:
    """Each corner's time: `phase`, unless the run's duration was set on the command line."""
    if p.phase and not ctx.duration_overridden:
        return p.phase
    return ctx.duration / len(p.corners)


def duration(p: Params, ctx: BuildContext) -> float:
    """Measured seconds: all corners one after another."""
    return phase_seconds(p, ctx) * len(p.corners)

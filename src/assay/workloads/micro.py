"""Four corners, X-Ray's micro-benchmark: 8k random read, 1 MiB sequential read, 8k random
write, 1 MiB sequential write, one after another, as fast as they go.

X-Ray (curie `four_corners_microbenchmark`): 6 disks of 2 GiB, one fio job per disk at
iodepth 128 (768 outstanding), unthrottled; random read, sequential read, random write,
sequential write, 60 s each with 60 s idle between them, after a sequential prefill and a
300 s random-read warm-up; it reports the medians of 1 s samples. Here: 6 files, iodepth 128
each, the same order, `phase` per corner and `gap` idle between (defaults 60 s and 60 s); the
timeline's warm-up runs the first corner (random read) before it is measured, and the
`iops_median` / `lat_avg_median` statistics are X-Ray's medians.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.fio.jobfile import fio_seconds
from assay.scenario.models import Duration, WorkloadBase
from assay.workloads.base import BuildContext, Pattern, Stream, build_stream, split_files

Corner = Literal["randread", "randwrite", "seqread", "seqwrite"]
XRAY_ORDER: tuple[Corner, ...] = ("randread", "seqread", "randwrite", "seqwrite")
CORNERS: dict[str, tuple[list[tuple[int, float]], float, bool]] = {
    "randread": ([(8192, 100)], 100, True),
    "randwrite": ([(8192, 100)], 0, True),
    "seqread": ([(1 << 20, 100)], 100, False),
    "seqwrite": ([(1 << 20, 100)], 0, False),
}
XRAY_FILES = 6
XRAY_FILE = 2 << 30
XRAY_IODEPTH = 128


class Params(WorkloadBase):
    kind: Literal["micro"] = "micro"
    corners: list[Corner] = Field(default_factory=lambda: list(XRAY_ORDER),
                                  description="in X-Ray's order by default")
    phase: Duration | None = Field(60.0, gt=0, description="seconds per corner (X-Ray: 60); "
                                                           "null: the duration / corners")
    gap: Duration = Field(60.0, ge=0, description="idle seconds between corners (X-Ray: 60)")
    files: int = Field(XRAY_FILES, ge=1, le=64, description="one fio job each (X-Ray: 6 disks)")


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    total = XRAY_FILE * p.files if p.dataset is None else p.dataset
    files = split_files(name, "corner", total, p.files)
    params = p.model_copy(update={"load": p.load.model_copy(
        update={"model": "closed", "iodepth": p.load.iodepth or XRAY_IODEPTH})})
    phase, gap = timing(p, ctx)
    streams = []
    for n, corner in enumerate(p.corners):
        sizes, read_pct, random = CORNERS[corner]
        s = build_stream(name, corner, params, files, Pattern(sizes, read_pct, random=random),
                         description=f"{corner}, {len(files)} jobs at iodepth "
                                     f"{params.load.iodepth}")
        start = ctx.warmup + n * (phase + gap)
        for job in s.jobs:
            # each corner starts at its own time: idle gaps between them, as X-Ray's waits
            if n:
                job.options["startdelay"] = fio_seconds(start)
            job.options["runtime"] = fio_seconds(phase + (ctx.warmup if n == 0 else 0))
        for c in s.components:
            c.start_s, c.end_s = start, start + phase
        streams.append(s)
    if p.corners and p.corners[0] != "randread" and ctx.warmup:
        ctx.notes.append(f"{name}: the warm-up runs {p.corners[0]}; X-Ray warms up with "
                         f"random reads")
    return streams


def timing(p: Params, ctx: BuildContext) -> tuple[float, float]:
    """Seconds per corner and idle seconds between corners. A duration set on the command
    line wins: corners and gaps shrink in proportion to fit it."""
    n = len(p.corners)
    phase = p.phase if p.phase else ctx.duration / n
    if not ctx.duration_overridden and p.phase:
        return phase, p.gap
    whole = n * phase + (n - 1) * p.gap
    unit = ctx.duration / whole
    return phase * unit, p.gap * unit


def duration(p: Params, ctx: BuildContext) -> float:
    """Measured seconds: all corners one after another, with the gaps between them."""
    phase, gap = timing(p, ctx)
    return phase * len(p.corners) + gap * (len(p.corners) - 1)

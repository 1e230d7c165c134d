"""Decision support (DSS): large sequential reads, X-Ray's database-colocation DSS.

X-Ray runs 4 streams of 1 MiB sequential reads at 180 IOPS each (720 MiB/s), iodepth 10.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.scenario.models import WorkloadBase
from assay.workloads.base import BuildContext, Pattern, Stream, build_stream, split_files


class Params(WorkloadBase):
    kind: Literal["dss"] = "dss"
    streams: int = Field(4, ge=1, le=64, description="concurrent scans, one file each")
    stream_iops: float | None = Field(180, gt=0, description="1 MiB reads/s per stream; "
                                                            "null = as fast as it goes")


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    total = p.streams * (28 << 30) if p.dataset is None else p.dataset
    target = p.stream_iops * p.streams if p.stream_iops else None
    return [build_stream(name, "scan", p, split_files(name, "scan", total, p.streams),
                         Pattern([(1 << 20, 100)], 100, random=False, iodepth=10,
                                 target_iops=target),
                         description="1 MiB sequential reads")]

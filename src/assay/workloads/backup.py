"""Backup stream: sequential 1 MiB reads of a source dataset written to N target files.

A SQL Server backup keeps 1-2 IOs outstanding per target file, so throughput grows with the
number of targets (seed 004). Graded in MB/s; as fast as it goes unless a rate is given.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.scenario.models import Size, WorkloadBase
from assay.workloads.base import BuildContext, Pattern, Stream, build_stream, split_files

MiB = 1 << 20


class Params(WorkloadBase):
    kind: Literal["backup"] = "backup"
    targets: int = Field(4, ge=1, le=64, description="backup target files")
    outstanding: int = Field(2, ge=1, le=2, description="IOs in flight per target (1-2)")
    source_files: int = Field(2, ge=1, le=64)
    rate: Size | None = Field(None, description="bytes/s cap for the whole backup")


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    total = 4 << 30 if p.dataset is None else p.dataset
    iops = p.rate / MiB if p.rate else None
    source = build_stream(name, "source", p, split_files(name, "source", total, p.source_files),
                          Pattern([(MiB, 100)], 100, random=False, iodepth=p.outstanding,
                                  target_iops=iops),
                          description="1 MiB sequential reads of the database")
    target = build_stream(name, "target", p,
                          split_files(name, "target", total // 2, p.targets),
                          Pattern([(MiB, 100)], 0, random=False, iodepth=p.outstanding,
                                  target_iops=iops),
                          transactional=False,
                          description=f"1 MiB sequential writes to {p.targets} target files")
    return [source, target]

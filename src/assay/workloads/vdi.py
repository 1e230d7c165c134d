"""Virtual desktops (VDI), X-Ray's task / knowledge / power profiles.

Per desktop: reads of 90 % 8k / 10 % 32k, 80 % random; writes of 32k, 20 % random; equal read
and write rates of 4 (task), 6 (knowledge) or 13 (power) IOPS each.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.scenario.models import WorkloadBase
from assay.workloads.base import (
    BuildContext,
    Pattern,
    Stream,
    build_stream,
    merge_streams,
    split_files,
)

PROFILES = {"task": 4.0, "knowledge": 6.0, "power": 13.0}  # read IOPS = write IOPS per desktop


class Params(WorkloadBase):
    kind: Literal["vdi"] = "vdi"
    profile: Literal["task", "knowledge", "power"] = "knowledge"
    desktops: int = Field(1, ge=1, le=100000)
    iops_per_desktop: float | None = Field(None, gt=0, description="reads + writes; overrides "
                                                                   "the profile")

    @property
    def target_iops(self) -> float:
        per = self.iops_per_desktop or 2 * PROFILES[self.profile]
        return per * self.desktops


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    total = 8 << 30 if p.dataset is None else p.dataset
    files = split_files(name, "io", total, min(p.desktops, 8))
    half = p.target_iops / 2
    reads = build_stream(name, "io", p, files,
                         Pattern([(8192, 90), (32768, 10)], 100, random=False,
                                 percentage_random=80, iodepth=8, target_iops=half),
                         description="desktop reads 8k/32k, 80% random; writes 32k, 20% random")
    writes = build_stream(name, "io", p, files,
                          Pattern([(32768, 100)], 0, random=False, percentage_random=20,
                                  iodepth=8, target_iops=half))
    return [merge_streams(reads, writes)]

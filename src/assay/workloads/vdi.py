"""Virtual desktops (VDI), X-Ray's task / knowledge / power profiles.

Per desktop (curie `vdi_simulator_*/vdi.fio`, one 16 GB disk): reads of 90 % 8k / 10 % 32k,
80 % random, iodepth 8, over 8 GiB at offset 0; writes of 32k, 20 % random, iodepth 1, into
a separate 2 GiB region at offset 8 GiB; equal read and write rates of 4 (task), 6
(knowledge) or 13 (power) IOPS each.

Desktops are folded into at most 8 files (fio jobs are processes), but each keeps its own
outstanding IO: a file of `k` desktops reads at iodepth 8k and writes at iodepth k, so 100
desktops have 900 IOs outstanding, as in X-Ray. Each file holds a read region (its first
4/5) and a write region (its last 1/5), X-Ray's 8 GiB + 2 GiB.
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
READ_DEPTH, WRITE_DEPTH = 8, 1  # per desktop (X-Ray's vdi.fio)
GROUPS = 8  # fio jobs per direction and block size, at most
MiB = 1 << 20


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
    total = 10 << 30 if p.dataset is None else p.dataset
    groups = min(p.desktops, GROUPS)
    files = split_files(name, "io", total, groups, minimum=5 * MiB)
    # desktops per file: as even as whole desktops allow
    desktops = {f.name: p.desktops // groups + (1 if i < p.desktops % groups else 0)
                for i, f in enumerate(files)}
    half = p.target_iops / 2
    reads = build_stream(name, "io", p, files,
                         Pattern([(8192, 90), (32768, 10)], 100, random=False,
                                 percentage_random=80, target_iops=half),
                         description="desktop reads 8k/32k, 80% random, iodepth 8 each; "
                                     "writes 32k, 20% random, iodepth 1 each, own region")
    writes = build_stream(name, "io", p, files,
                          Pattern([(32768, 100)], 0, random=False, percentage_random=20,
                                  target_iops=half))
    for stream, depth in ((reads, READ_DEPTH), (writes, WRITE_DEPTH)):
        for job in stream.jobs:
            fname = str(job.options["filename"])
            size = int(str(job.options["size"]))
            read_region = size * 4 // 5 // MiB * MiB
            job.options["iodepth"] = p.load.iodepth or depth * desktops[fname]
            if stream is reads:
                job.options["size"] = read_region
            else:
                job.options["offset"] = read_region
                job.options["size"] = size - read_region
    return [merge_streams(reads, writes)]

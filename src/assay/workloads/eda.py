"""EDA-like: electronic design automation, counted in job sets.

SPEC SFS 2014's EDA (public `benchmarks.xml`): one job set = 3 EDA_FRONTEND processes at
100 op/s (small files, metadata intensive: ~1,200 files of 16 KiB and 1,200 empty ones per
process) + 2 EDA_BACKEND processes at 75 op/s (10 MiB files, sequential), 450 op/s; the
published SPECstorage 2020 EDA_BLENDED results give 450 op/s and 7.3 MB/s per job set; SFS
2014 sizes 11 GiB per job set. The operation mixes are SPEC's (licensed): this is assay's
own at those totals, "EDA-like", never a SPEC result (docs/files.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.scenario.models import WorkloadBase
from assay.scenario.units import format_size
from assay.workloads.base import BuildContext, Stream
from assay.workloads.fileops import Op, op_streams

SMALL = 16 << 10  # EDA_FRONTEND's files
LARGE = 10 << 20  # EDA_BACKEND's files
PIECE = 32 << 10  # backend IO size: 150 x 32 KiB + 75 x 16 KiB = 6.1 MB/s (published: 7.3)
BYTES_PER_SET = 11 << 30  # SFS 2014: 11 GiB per job set
SMALL_PER_SET = 3 * 1200  # 3 frontend processes x ~1,200 files of 16 KiB
MIX = {  # per job set: frontend 3 x 100 op/s, backend 2 x 75 op/s
    "fe_stat": Op(150, "filestat", "read", "frontend: stat of a 16 KiB file", "small"),
    "fe_read": Op(45, "", "read", "frontend: whole 16 KiB files read, at random", "small"),
    "fe_write": Op(30, "", "write", "frontend: whole 16 KiB files written, at random", "small"),
    "fe_create": Op(38, "filecreate", "write", "frontend: new files created"),
    "fe_delete": Op(37, "filedelete", "write", "frontend: files deleted"),
    "be_read": Op(75, "", "read", "backend: 10 MiB files read sequentially", "large", PIECE),
    "be_write": Op(75, "", "write", "backend: 10 MiB files written sequentially", "large",
                   PIECE),
}


class Params(WorkloadBase):
    kind: Literal["eda"] = "eda"
    job_sets: int = Field(1, ge=1, le=10_000, description="job sets: the load unit, 450 op/s "
                                                          "each")


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    per_set = (p.dataset // p.job_sets) if p.dataset is not None else BYTES_PER_SET
    small = max(16, min(SMALL_PER_SET, per_set // 10 // SMALL))
    large = max(2, (per_set - small * SMALL) // LARGE)
    streams = op_streams(name, p, ctx, p.job_sets, "j", MIX,
                         {"small": (small, SMALL), "large": (large, LARGE)})
    ctx.notes.append(
        f"{name}: {p.job_sets} EDA-like job set{'s' if p.job_sets > 1 else ''} = "
        f"{450 * p.job_sets * p.load.scale:,.0f} op/s; per job set {small:,} files of 16 KiB "
        f"and {large:,} of 10 MiB ({format_size(small * SMALL + large * LARGE)}), laid out "
        f"by the prefill; assay's own op mix at SPEC's published totals (docs/files.md)")
    return streams

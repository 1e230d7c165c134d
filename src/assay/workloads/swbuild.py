"""SWBUILD-like: a software build's metadata-heavy file load, counted in builds.

SPECstorage Solution 2020's SWBUILD counts builds, each a fixed mix of file and metadata
operations at 500 op/s and 4.1 MB/s (its published results), with 5 GB of files per build
(SFS 2014's capacity rule): "like running make against tens of thousands of files: the file
attributes are checked and, if necessary, the file is read, compiled, and written back".
SPEC's workload definitions are licensed, so this is assay's own mix at those published
totals, and its results are "SWBUILD-like", never SPEC results (docs/files.md).

Per build, each operation is its own fio job at its own fixed rate, on its own files (the
data set grows with the builds, never with the jobs): `stat` (fio's filestat engine), `read`
(whole 64 KiB source files, at random), `write` (whole 64 KiB object files), `create`
(filecreate, fresh names) and `delete` (filedelete of files fio lays out at its start). Every
operation is graded like IO: rate kept (`builds: rate`), latency from the submit. Latency from
the due time is not measured for the metadata operations: fio 3.33's issue log of a file
engine records the files, not the operations.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.scenario.models import Size, WorkloadBase
from assay.scenario.units import format_size
from assay.workloads.base import BuildContext, Stream
from assay.workloads.fileops import Op, op_streams

OPS_PER_BUILD = 500  # SPECstorage 2020 SWBUILD results: 95,003 op/s for 190 builds
BYTES_PER_BUILD = 5 * 10**9  # SFS 2014: 5 GB of capacity per build
FILE = 64 << 10  # 30 reads + 35 writes of 64 KiB a second: 4.3 MB/s (published: 4.1)
MIX = {
    "stat": Op(355, "filestat", "read", "stat of a source file (make's attribute checks)", "src"),
    "read": Op(30, "", "read", "whole 64 KiB source files read, at random", "src"),
    "write": Op(35, "", "write", "whole 64 KiB object files written", "obj"),
    "create": Op(40, "filecreate", "write", "new files created"),
    "delete": Op(40, "filedelete", "write", "files deleted"),
}


class Params(WorkloadBase):
    kind: Literal["swbuild"] = "swbuild"
    builds: int = Field(1, ge=1, le=10_000, description="concurrent builds: the load unit, "
                                                        "500 op/s each")
    file_size: Size = Field(FILE, description="bytes per source and object file")


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    if p.file_size < 4096 or p.file_size % 4096:
        raise ValueError("`file_size` must be a multiple of 4k")
    per_build = (p.dataset // p.builds) if p.dataset is not None else BYTES_PER_BUILD
    sources = max(16, per_build * 4 // 5 // p.file_size)  # 4/5 source files, 1/5 objects
    objects = max(4, per_build // 5 // p.file_size)
    streams = op_streams(name, p, ctx, p.builds, "b", MIX,
                         {"src": (sources, p.file_size), "obj": (objects, p.file_size)})
    ctx.notes.append(
        f"{name}: {p.builds} SWBUILD-like build{'s' if p.builds > 1 else ''} = "
        f"{OPS_PER_BUILD * p.builds * p.load.scale:,.0f} op/s, {sources + objects:,} files of "
        f"{format_size(p.file_size)} ({format_size((sources + objects) * p.file_size)}) per "
        f"build, laid out by the prefill; assay's own op mix at SPEC's published "
        f"totals, not SPEC's (docs/files.md)")
    return streams

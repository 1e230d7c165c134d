"""VDA-like: video data acquisition, counted in streams.

SPECstorage Solution 2020's VDA counts video streams at 10 op/s and 4.6 MB/s each (WEKA:
14,400 streams, 144,098 op/s, 66,321 MB/s), with 24 GB of capacity per stream (SFS 2014's
rule). SPEC's workload definitions are licensed: this is assay's own shape at those published
totals, "VDA-like", never a SPEC result (docs/files.md).

Each stream has its own file and writes it sequentially at a fixed rate (the camera's
recording), with some sequential reads of it (playback, review): 9 writes and 1 read of
448 KiB a second, 4.59 MB/s. The data set grows with the streams, never with the jobs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.scenario.models import WorkloadBase
from assay.workloads.base import BuildContext, DataFile, Pattern, Stream, build_stream

OPS_PER_STREAM = 10  # published: 144,098 op/s for 14,400 streams
BLOCK = 448 << 10  # 10 x 448 KiB = 4.59 MB/s a stream (published: 4.6)
READ_PCT = 10.0  # assay's own: playback beside the recording
BYTES_PER_STREAM = 24 * 10**9  # SFS 2014: 24 GB of capacity per stream
MiB = 1 << 20


class Params(WorkloadBase):
    kind: Literal["vda"] = "vda"
    streams: int = Field(1, ge=1, le=100_000, description="video streams: the load unit, "
                                                          "10 op/s and 4.6 MB/s each")


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    per = (p.dataset // p.streams) if p.dataset is not None else BYTES_PER_STREAM
    per = max(BLOCK, per // MiB * MiB)
    files = [DataFile(f"{name}.video.{i + 1}.dat", per) for i in range(p.streams)]
    pattern = Pattern([(BLOCK, 100)], READ_PCT, random=False, iodepth=1,
                      target_iops=OPS_PER_STREAM * p.streams)
    ctx.notes.append(f"{name}: {p.streams} VDA-like stream{'s' if p.streams > 1 else ''}, "
                     f"each its own file of {per / 1e9:.2f} GB written sequentially at 9 and "
                     f"read at 1 op/s of 448 KiB; assay's own shape at SPEC's published "
                     f"totals, not SPEC's (docs/files.md)")
    return [build_stream(name, "video", p, files, pattern,
                         description="sequential 448 KiB: recording (90 %) and playback")]

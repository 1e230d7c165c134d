"""Decision support (DSS): large sequential reads, X-Ray's database-colocation DSS VM.

X-Ray (curie `database_colocation_standard/dss.fio`): 4 streams of 1 MiB sequential reads at
180 IOPS each (720 MiB/s), iodepth 10, over 28 GiB files, plus 2 log writers of 32 KiB (90 %
sequential) at 100 IOPS each. `preset: high` (`database_colocation_high`): 300 IOPS per
stream, each reading 2 GiB zones 32 GiB apart in a 512 GiB file (16 zones, 32 GiB touched).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.fio.jobfile import Options
from assay.scenario.models import WorkloadBase
from assay.workloads.base import BuildContext, Pattern, Stream, build_stream, split_files

GiB = 1 << 30
# preset: (1 MiB reads/s per stream, file size, zoned)
PRESETS = {"standard": (180.0, 28 * GiB, False), "high": (300.0, 512 * GiB, True)}
ZONES = 16  # high: 2 GiB zones, 30 GiB skipped between them, in 512 GiB


class Params(WorkloadBase):
    kind: Literal["dss"] = "dss"
    preset: Literal["standard", "high"] = Field("standard", description="X-Ray DSS intensity")
    streams: int = Field(4, ge=1, le=64, description="concurrent scans, one file each")
    stream_iops: float | None = Field(None, gt=0, description="1 MiB reads/s per stream "
                                                              "(default: the preset's)")
    log_files: int = Field(2, ge=0, le=16, description="log writers (X-Ray: 2); 0 leaves "
                                                       "them out")
    log_iops: float = Field(100, gt=0, description="32 KiB writes/s per log writer")
    closed: bool = Field(False, description="scans as fast as they go (no stream_iops)")


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    rate, file_size, zoned = PRESETS[p.preset]
    total = p.streams * file_size if p.dataset is None else p.dataset
    per_stream = None if p.closed else (p.stream_iops or rate)
    target = per_stream * p.streams if per_stream else None
    files = split_files(name, "scan", total, p.streams)
    extra: Options = {}
    if zoned:  # 2 GiB zones 32 GiB apart in X-Ray's 512 GiB file: 1/16 of the file
        zone = max(1 << 20, files[0].size // (ZONES * 16) // (1 << 20) * (1 << 20))
        extra = {"zonesize": zone, "zoneskip": 15 * zone}
    streams = [build_stream(name, "scan", p, files,
                            Pattern([(1 << 20, 100)], 100, random=False, iodepth=10,
                                    target_iops=target),
                            description="1 MiB sequential reads" +
                                        (", 16 zones of 1/256 of each file" if zoned else ""),
                            extra=extra)]
    if p.log_files:
        logs = split_files(name, "log", 2 * GiB * p.log_files if p.dataset is None
                           else max(p.dataset // 16, p.log_files << 20), p.log_files)
        streams.append(build_stream(
            name, "log", p, logs,
            Pattern([(32768, 100)], 0, random=False, percentage_random=10, iodepth=1,
                    target_iops=p.log_iops * p.log_files),
            transactional=False, description="log: 32k writes, 90% sequential"))
    return streams

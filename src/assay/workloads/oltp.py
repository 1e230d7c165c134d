"""OLTP database: random 8k/32k data IO plus mostly-sequential log writes (X-Ray's OLTP).

Presets are X-Ray's published fio files: 4 data files of 90 % 8k / 10 % 32k random IO, 50/50
read/write, iodepth 8; 2 log files of 32k writes, 10 % random, iodepth 1.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from assay.scenario.models import WorkloadBase
from assay.scenario.strict import Percent
from assay.workloads.base import BuildContext, Pattern, Stream, build_stream, split_files

GiB = 1 << 30

# preset: (data IOPS per file r+w, log IOPS per file, data file size, log file size)
PRESETS = {
    "standard": (1000, 100, 28 * GiB, 2 * GiB),  # 4,200 IOPS per VM
    "medium": (1500, 150, 140 * GiB, 4 * GiB),  # 6,300
    "high": (1500, 200, 28 * GiB, 2 * GiB),  # 6,400
}


class Params(WorkloadBase):
    kind: Literal["oltp"] = "oltp"
    preset: Literal["standard", "medium", "high"] | None = Field(
        None, description="X-Ray OLTP intensity; or give data_iops/log_iops")
    data_iops: float | None = Field(None, gt=0, description="all data files, reads + writes")
    log_iops: float | None = Field(None, ge=0, description="all log files")
    read_pct: Percent = Field(50, description="share of data IO that reads")
    data_files: int = Field(4, ge=1, le=64)
    log_files: int = Field(2, ge=0, le=16)

    @model_validator(mode="after")
    def _rates(self) -> Params:
        if self.preset is None and self.data_iops is None and self.load.model != "closed":
            raise ValueError("give a `preset` (standard, medium, high) or `data_iops`")
        return self

    def rates(self) -> tuple[float | None, float | None]:
        per_data, per_log, _, _ = PRESETS[self.preset or "standard"]
        data = self.data_iops if self.data_iops is not None else (
            per_data * self.data_files if self.preset else None)
        log = self.log_iops if self.log_iops is not None else (
            per_log * self.log_files if self.preset else (data or 0) / 20)
        return data, log

    def sizes(self) -> tuple[int, int]:
        """Total data and log bytes: the preset's published sizes unless `dataset` is given."""
        _, _, data_file, log_file = PRESETS[self.preset or "standard"]
        data, log = data_file * self.data_files, log_file * self.log_files
        if self.dataset is not None:
            data_share = data / (data + log) if log else 1.0
            return int(self.dataset * data_share), self.dataset - int(self.dataset * data_share)
        return data, log


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    data_iops, log_iops = p.rates()
    data_bytes, log_bytes = p.sizes()
    streams = [build_stream(
        name, "data", p, split_files(name, "data", data_bytes, p.data_files),
        Pattern([(8192, 90), (32768, 10)], p.read_pct, iodepth=8, target_iops=data_iops),
        description="database files: 90% 8k / 10% 32k random")]
    if p.log_files and (log_iops is None or log_iops > 0):
        streams.append(build_stream(
            name, "log", p, split_files(name, "log", log_bytes, p.log_files),
            Pattern([(32768, 100)], 0, random=False, percentage_random=10, iodepth=1,
                    target_iops=log_iops),
            description="transaction log: 32k writes, 90% sequential"))
    return streams

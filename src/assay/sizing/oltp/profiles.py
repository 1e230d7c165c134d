"""OLTP IO profiles per database server: X-Ray's presets, or one you declare."""

from __future__ import annotations

from dataclasses import dataclass, replace

from assay.sizing.explain import GIB, KIB

SRC_XRAY = "Nutanix X-Ray OLTP fio files (xray-and-hcibench §1.6; seed 001: 6,000 + 400 IOPS)"
SRC_SQLIO = "SQL Server's I/O Characteristics (sizing-rules §3.1)"

# Data IO: 90 % 8 KiB, 10 % 32 KiB (X-Ray bssplit) -> mean 10.4 KiB; log IO: 32 KiB appends.
DATA_IO_BYTES = 0.9 * 8 * KIB + 0.1 * 32 * KIB
LOG_IO_BYTES = 32 * KIB


@dataclass(frozen=True)
class OltpProfile:
    data_iops: float
    log_iops: float
    read_pct: float
    data_files: int
    log_files: int
    dataset: int  # bytes per database server: data and log files
    log_dataset: int = 0  # the part of `dataset` in log files
    log_io_bytes: float = LOG_IO_BYTES  # bytes per log write

    @property
    def data_file_size(self) -> float:
        """Data spread evenly over the data files, as SQL Server's proportional fill does."""
        return (self.dataset - self.log_dataset) / self.data_files


# X-Ray: standard 4 x 500+500 data + 2 x 100 log over 4 x 28 GiB + 2 x 2 GiB;
# high 4 x 750+750 + 2 x 200; medium 4 x 750+750 + 2 x 150 over 4 x 140 GiB + 2 x 4 GiB.
PRESETS = {
    "standard": OltpProfile(4000, 200, 50, 4, 2, 4 * 28 * GIB + 2 * 2 * GIB, 2 * 2 * GIB),
    "medium": OltpProfile(6000, 300, 50, 4, 2, 4 * 140 * GIB + 2 * 4 * GIB, 2 * 4 * GIB),
    "high": OltpProfile(6000, 400, 50, 4, 2, 4 * 28 * GIB + 2 * 2 * GIB, 2 * 2 * GIB),
}


def with_dataset(p: OltpProfile, dataset: int) -> OltpProfile:
    """Another dataset size, its log files keeping their share (as the oltp workload splits
    a scenario's `dataset`)."""
    share = p.log_dataset / p.dataset if p.dataset else 0.0
    return replace(p, dataset=dataset, log_dataset=round(dataset * share))

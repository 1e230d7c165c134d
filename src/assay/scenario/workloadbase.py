"""The keys every workload accepts (`WorkloadBase`) and their parts: the data written, where
IO lands, how it is issued, and a cluster's failover. Workload kinds subclass `WorkloadBase`
in their own package (assay.workloads).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from assay.scenario import units
from assay.scenario.strict import Duration, Percent, Ratio, Size, Strict

MAX_DATASET = 1 << 50  # 1 PiB: more is a typo, not a test anyone can prefill


class DataSpec(Strict):
    """What the written data looks like to a platform's data reduction."""

    compressibility: Ratio = Field(1.0, description="compression ratio of written data; 1 = random")
    dedupe: Ratio = Field(1.0, description="deduplication ratio of written data; 1 = all unique")


class AccessSpec(Strict):
    """Where in the dataset IO lands: uniform, or skewed onto a hot part."""

    distribution: Literal["uniform", "zipf", "pareto", "hotcold"] = "uniform"
    theta: float | None = Field(None, gt=0, description="zipf θ (default 1.2) or pareto h (0.9)")
    hot_io: Percent = Field(80, description="hotcold: share of IO that hits the hot zone")
    hot_data: Percent = Field(20, description="hotcold: share of the dataset that is hot")


class LoadSpec(Strict):
    """How IO is issued: at a fixed rate (open loop) or as fast as it goes (closed loop)."""

    model: Literal["fixed", "closed"] | None = Field(
        None, description="default: fixed when the workload has a target rate, else closed")
    pacing: Literal["poisson", "even"] = Field(
        "poisson", description="fixed rate: exponential (Poisson) or evenly spaced arrivals")
    threads: int | None = Field(None, ge=1, le=1024, description="closed loop: jobs per stream")
    iodepth: int | None = Field(None, ge=1, le=4096, description="outstanding IO per job")
    scale: float = Field(1.0, gt=0, description="multiply every target rate (search, sweeps)")


class FailoverSpec(Strict):
    """A cluster's answer to a lost host (X-Ray's HA restart, an Exchange DAG's activation):
    the lost host's instances start again on the surviving hosts (docs/hosts.md)."""

    after: Duration = Field(..., ge=0, description="how long after the loss is detected the "
                                                   "lost host's instances start again on "
                                                   "the survivors")
    to: str | list[str] | None = Field(None, description="the hosts that may take them, "
                                                         "picked as `hosts` picks; default "
                                                         "every other host of the run")


class WorkloadBase(Strict):
    """Keys every workload kind accepts. Kinds subclass this with their own parameters."""

    kind: str
    dataset: Size | None = Field(None, description="total bytes of the workload's files")
    data: DataSpec = Field(default_factory=DataSpec)
    access: AccessSpec = Field(default_factory=AccessSpec)
    load: LoadSpec = Field(default_factory=LoadSpec)
    prefill: bool = Field(True, description="write the dataset before measuring")
    host: str = Field("local", description="which host runs this workload")
    hosts: str | list[str] | None = Field(
        None, description='cluster placement (with --hosts): all, "0", "1:", ":n/2", a list '
                          'of host names, or an inventory group; default all')
    count_per_host: int = Field(1, ge=1, le=256, description="instances on each host, each "
                                                             "with its own files and rate")
    stagger: Duration = Field(0.0, ge=0, description="delay between instance starts")
    failover: FailoverSpec | None = Field(None, description="cluster runs: restart a lost "
                                                            "host's instances on the "
                                                            "survivors")
    subdir: str | None = Field(None, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$",
                               description="sub-directory of the target for this workload's "
                                           "files (e.g. a btrfs subvolume)")
    start: Duration = Field(0.0, ge=0, description="when it begins, after the measured start "
                                                   "(a noisy neighbour arriving)")
    stop: Duration | None = Field(None, gt=0, description="when it ends, after the measured "
                                                          "start; default: with the run")
    verify: bool | None = Field(None, description="integrity mode for this workload "
                                                  "(docs/integrity.md); default: the scenario's "
                                                  "`integrity`")

    @field_validator("dataset")
    @classmethod
    def _dataset(cls, v: int | None) -> int | None:
        if v is not None and v <= 0:
            raise ValueError("must be more than 0 (leave it out for the kind's default size)")
        if v is not None and v > MAX_DATASET:
            raise ValueError(f"{units.format_size(v)} is more than the 1PiB limit")
        return v

    @model_validator(mode="after")
    def _window(self) -> WorkloadBase:
        if self.stop is not None and self.stop <= self.start:
            raise ValueError("`stop` must come after `start`")
        return self

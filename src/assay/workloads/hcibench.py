"""HCIBench easy-run (vmware-labs/hci-benchmark-appliance `HCIBench/automation/lib/easy-run.rb`).

Profiles: 4k70r (4k random, 70 % read), 4k100r, 8k50r and 256k0r (256k sequential write).
Easy-run on vSAN OSA: 2 VMs per disk group, 8 data disks per VM (latency target "Max"),
32 / 8 = 4 threads (outstanding IOs) per disk, a quarter of that for sequential profiles
(checksum on), working set 100 %, 1,800 s warm-up and 3,600 s test, data 50 % compressible
and 50 % dedupable (`-bc 50 -dp 50`). The VMs' total size is cache x 0.25 (hybrid) or
x 0.75 (all-flash, cache capped at 600 GB per disk group) divided by the FTT amplification,
(failures to tolerate + 1) for mirroring. Each disk is one file and one closed-loop fio job
here; HCIBench's VMs are the files' groups.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.scenario.models import Size, WorkloadBase
from assay.workloads.base import BuildContext, Pattern, Stream, build_stream, split_files

GB = 10**9
# profile: (block size, read %, random)
PROFILES = {"4k70r": (4096, 70.0, True), "4k100r": (4096, 100.0, True),
            "8k50r": (8192, 50.0, True), "256k0r": (262144, 0.0, False)}
RATIO = {"hybrid": 0.25, "all-flash": 0.75}
ALL_FLASH_CACHE_CAP = 600 * GB  # per disk group
THREADS = 32  # per VM, divided over its data disks (vSAN OSA)
SEQ_DIVIDER = 4  # sequential profiles, checksum on


class Params(WorkloadBase):
    kind: Literal["hcibench"] = "hcibench"
    profile: Literal["4k70r", "4k100r", "8k50r", "256k0r"] = "4k70r"
    disk_groups: int = Field(1, ge=1, le=64, description="vSAN disk groups: 2 VMs each")
    disks: int = Field(8, ge=1, le=64, description="data disks per VM (easy-run: 8 for Max)")
    cache: Size | None = Field(None, description="total cache size: sizes the working set by "
                                                 "HCIBench's rule")
    media: Literal["hybrid", "all-flash"] = "all-flash"
    ftt: int = Field(1, ge=0, le=3, description="failures to tolerate (mirroring)")

    @property
    def vms(self) -> int:
        return 2 * self.disk_groups

    def working_set(self) -> int | None:
        """HCIBench's deployed size: cache x ratio / (ftt + 1)."""
        if self.cache is None:
            return None
        cache = self.cache
        if self.media == "all-flash":
            cache = min(cache, ALL_FLASH_CACHE_CAP * self.disk_groups)
        return int(cache * RATIO[self.media] / (self.ftt + 1))


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    bs, read_pct, random = PROFILES[p.profile]
    disks = p.vms * p.disks
    total = p.working_set() or p.dataset or disks * (1 << 30)
    threads = max(1, THREADS // p.disks // (1 if random else SEQ_DIVIDER))
    params = p.model_copy(update={"load": p.load.model_copy(
        update={"model": "closed", "iodepth": p.load.iodepth or threads})})
    files = split_files(name, "disk", total, disks)
    kind = "random" if random else "sequential"
    return [build_stream(name, "io", params, files, Pattern([(bs, 100)], read_pct, random=random),
                         description=f"HCIBench {p.profile}: {bs // 1024}k {kind}, "
                                     f"{read_pct:g}% read, {p.vms} VMs x {p.disks} disks, "
                                     f"{params.load.iodepth} outstanding per disk")]

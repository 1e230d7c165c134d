"""VDI sizing from a Login VSI style profile: IOPS (steady and storms), cores, RAM, capacity.

Rules: `sizing-rules.md` §3.3. Per-desktop steady IOPS are the X-Ray VDI simulator rates
(task 8, knowledge 12, power 26); storm factors come from Dell BP1018's measurements.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.exitcodes import UserError
from assay.sizing.explain import GIB, BinBytes, Bytes, Figure, Result, ceil_div

SRC_IOPS = "X-Ray VDI simulator rates (xray-and-hcibench §1.6)"
SRC_STORM = "Dell BP1018: steady 7-8, login 11-13, boot 16-18 IOPS per desktop (sizing-rules §3.3)"
SRC_DENSITY = "Citrix VDI best practices 7.15 LTSR, users per core (sizing-rules §3.3)"
SRC_CAP = "ILTA, VDI: images x size x 3 versions + desktops x cache (sizing-rules §3.3)"
SRC_BW = "VMware Horizon: 1 Gbps of storage bandwidth per 100 desktops (sizing-rules §3.3)"
SRC_RW = "IOPS considerations for VDI workloads: design 30/70 R/W, worst 0/100 (sizing-rules §3.3)"

IOPS_PER_DESKTOP = {"task": 8, "knowledge": 12, "power": 26}
# profile -> Citrix workload class
WORKLOAD_CLASS = {"task": "light", "knowledge": "medium", "power": "heavy"}
USERS_PER_CORE = {
    "win10": {"light": 12, "medium": 9, "heavy": 4},
    "win7": {"light": 13, "medium": 10, "heavy": 5},
    "server2016": {"light": 21, "medium": 14},
}
# BP1018 midpoints relative to the steady state (7.5): login 12 -> 1.6x, boot 17 -> 2.27x
LOGIN_STORM_FACTOR = 12 / 7.5
BOOT_STORM_FACTOR = 17 / 7.5
STEADY_READ_PCT = 30
IMAGE_VERSIONS = 3
GBPS_PER_100_DESKTOPS = 1.0


@dataclass(frozen=True)
class VdiDesign:
    desktops: int
    profile: str = "knowledge"
    os: str = "win10"
    vcpus: int = 2  # per desktop (X-Ray VDI VM: 2 vCPU / 2 GB)
    ram: int = 2 * GIB  # per desktop
    images: int = 1
    image_size: int = 40 * GIB
    cache: int = 6 * GIB  # per desktop: write cache / linked-clone delta
    profile_size: int = 0  # per desktop, persistent user data kept on the cluster
    nodes: int | None = None
    failures: int = 1


def validate(d: VdiDesign) -> None:
    if d.desktops <= 0:
        raise UserError(f"--desktops must be a positive number, got {d.desktops}")
    if d.profile not in IOPS_PER_DESKTOP:
        raise UserError(f"--profile must be task, knowledge or power, got {d.profile}")
    if d.os not in USERS_PER_CORE:
        raise UserError(f"--os must be win10, win7 or server2016, got {d.os}")
    if WORKLOAD_CLASS[d.profile] not in USERS_PER_CORE[d.os]:
        raise UserError(f"no published density for {d.profile} users on {d.os} "
                        f"(Citrix gives light and medium only for shared server desktops)")
    if d.vcpus < 1 or d.ram <= 0 or d.images < 0 or d.image_size < 0 or d.cache < 0:
        raise UserError("--vcpus, --ram, --images, --image-size and --cache must be positive")
    if d.failures < 0:
        raise UserError(f"--failures cannot be negative, got {d.failures}")
    if d.nodes is not None and d.nodes <= d.failures:
        raise UserError(f"--nodes {d.nodes} leaves no node after {d.failures} failure(s)")


def capacity(images: int, image_size: int, desktops: int, cache: int,
             profile_size: int = 0) -> float:
    """images x image_size x 3 versions + desktops x (cache + profile)."""
    return images * image_size * IMAGE_VERSIONS + desktops * (cache + profile_size)


def size(d: VdiDesign) -> Result:
    validate(d)
    r = Result("vdi", inputs={
        "desktops": d.desktops, "profile": d.profile, "os": d.os, "vcpus": d.vcpus,
        "ram": d.ram, "images": d.images, "image_size": d.image_size, "cache": d.cache,
        "profile_size": d.profile_size, "nodes": d.nodes, "failures": d.failures})
    per = IOPS_PER_DESKTOP[d.profile]
    r.add("iops_per_desktop", Figure("IOPS per desktop, steady", per, "IOPS",
                                     "profile rate", {"profile": d.profile}, SRC_IOPS))
    steady = per * d.desktops
    r.add("iops_steady", Figure("IOPS, steady state", steady, "IOPS",
                                "desktops x iops_per_desktop",
                                {"desktops": d.desktops, "iops_per_desktop": per}, SRC_IOPS))
    r.add("iops_login", Figure("IOPS, login storm", steady * LOGIN_STORM_FACTOR, "IOPS",
                               "iops_steady x 12 / 7.5", {"iops_steady": steady}, SRC_STORM))
    r.add("iops_boot", Figure("IOPS, boot storm", steady * BOOT_STORM_FACTOR, "IOPS",
                              "iops_steady x 17 / 7.5", {"iops_steady": steady}, SRC_STORM))
    r.add("read_pct", Figure("Read share, steady (design)", STEADY_READ_PCT, "%",
                             "30/70 design average; plan for 0/100 as the worst case", {},
                             SRC_RW))
    bw = d.desktops / 100 * GBPS_PER_100_DESKTOPS * 1000 / 8
    r.add("bandwidth", Figure("Storage bandwidth to provision", bw, "MB/s",
                              "desktops / 100 x 1 Gbps", {"desktops": d.desktops}, SRC_BW))
    density = USERS_PER_CORE[d.os][WORKLOAD_CLASS[d.profile]]
    cores = ceil_div(d.desktops, density)
    r.add("cores", Figure("Physical cores", cores, "cores", "ceil(desktops / users_per_core)",
                          {"desktops": d.desktops, "users_per_core": density,
                           "class": WORKLOAD_CLASS[d.profile], "os": d.os}, SRC_DENSITY))
    ram = d.desktops * d.ram
    r.add("ram", Figure("RAM", ram, "bytes", "desktops x ram_per_desktop",
                        {"desktops": d.desktops, "ram_per_desktop": BinBytes(d.ram)},
                        "X-Ray VDI VM 2 vCPU / 2 GB (default)", binary=True))
    cap = capacity(d.images, d.image_size, d.desktops, d.cache, d.profile_size)
    r.add("capacity", Figure("Capacity", cap, "bytes",
                             "images x image_size x 3 + desktops x (cache + profile_size)",
                             {"images": d.images, "image_size": Bytes(d.image_size),
                              "desktops": d.desktops, "cache": Bytes(d.cache),
                              "profile_size": Bytes(d.profile_size)}, SRC_CAP))
    if d.nodes is not None:
        worst = ceil_div(d.desktops, d.nodes - d.failures)
        r.add("desktops_per_node_worst", Figure(
            f"Desktops per node, {d.failures} node(s) down", worst, "desktops",
            "ceil(desktops / (nodes - failures))",
            {"desktops": d.desktops, "nodes": d.nodes, "failures": d.failures},
            "ESRP practice: validate one node's load after the failure (seed 000)"))
        r.add("iops_per_node_worst", Figure(
            "IOPS per node after the failure", worst * per, "IOPS",
            "desktops_per_node_worst x iops_per_desktop",
            {"desktops_per_node_worst": worst, "iops_per_desktop": per}, SRC_IOPS))
    r.demand = {"kind": "vdi", "cores": cores, "ram_bytes": ram, "capacity_bytes": cap,
                "iops": steady,
                "explain": f"{d.desktops} {d.profile} desktops: cores by Citrix density, RAM, "
                           f"images and per-desktop cache, steady IOPS"}
    r.notes.append("Storms: size the platform for the boot storm or stagger boots; the "
                   "emitted scenario validates the steady state.")
    return r

"""What a cluster design is made of: the workloads' demands, the node, the resiliency choices."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.exitcodes import UserError
from assay.sizing import capacity, resiliency
from assay.sizing.explain import GIB

SRC_CVM = "Nutanix Sizer wiki, CVM cores and memory (sizing-rules §1.6)"

# CVM cores per node by workload (Sizer): 6 for databases and Exchange, 4 for the rest
CVM_CORES = {"exchange": 6, "oltp": 6, "sql": 6, "vdi": 4, "raw": 4, "backup": 4}
CVM_RAM_DEFAULT = 32 * GIB  # large / all-flash platforms (Sizer); 20 GiB for VDI-only
CVM_RAM_RF3 = 8 * GIB  # Sizer add-on for RF3


@dataclass(frozen=True)
class Demand:
    """What one workload asks of the cluster (logical capacity, before RF)."""

    kind: str
    cores: float
    ram: float  # bytes
    capacity: float  # bytes
    iops: float = 0.0
    name: str = ""

    @classmethod
    def from_json(cls, doc: dict[str, Any], name: str) -> Demand:
        """The `demand` block of `assay size exchange|oltp|vdi --json`."""
        d = doc.get("demand", doc)
        try:
            return cls(kind=str(d.get("kind", "raw")), cores=float(d["cores"]),
                       ram=float(d["ram_bytes"]), capacity=float(d["capacity_bytes"]),
                       iops=float(d.get("iops") or 0.0), name=name)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise UserError(f"{name}: not the JSON of `assay size ... --json` (needs a demand "
                            f"with cores, ram_bytes and capacity_bytes)") from None


@dataclass(frozen=True)
class NodeSpec:
    cores: int
    ram: int  # bytes
    drives: int
    drive_size: int  # bytes, decimal as drives are sold (3.84TB = 3.84 x 10^12)
    drive_reserve: int = 0  # bytes per drive kept by the platform (Sizer: ~80 GB per SSD)

    @property
    def raw(self) -> int:
        return self.drives * self.drive_size

    @property
    def extent_store(self) -> int:
        return self.drives * (self.drive_size - self.drive_reserve)


@dataclass(frozen=True)
class ClusterDesign:
    node: NodeSpec
    workloads: tuple[Demand, ...]
    rf: int = 2
    ec: bool = False
    ec_share_pct: float = 50.0
    plan: str = "auto"
    awareness: str = "node"
    nodes_per_domain: int = 1
    nodes: int | None = None  # evaluate this node count instead of computing one
    cvm_cores: float | None = None
    cvm_ram: int = CVM_RAM_DEFAULT
    hypervisor_ram: int = 0
    target_cpu_pct: float = 80.0
    max_full_pct: float = 100 * capacity.RECOMMENDED_FULL  # capacity ceiling after failure
    data_reduction: float | None = None
    node_iops: float | None = None
    afr_pct: float = 5.0
    rebuild_rate: float = 200 * (1 << 20)  # bytes/s per node
    replacement_hours: float = 48.0
    restore_hours: float = 24.0  # to bring data back once more than FT nodes failed
    workload_cvm: dict[str, float] = field(default_factory=dict)

    @property
    def domain(self) -> int:
        return 1 if self.awareness == "node" else self.nodes_per_domain

    @property
    def ceiling(self) -> float:
        return self.max_full_pct / 100

    def inputs(self) -> dict[str, Any]:
        n = self.node
        return {
            "node": {"cores": n.cores, "ram": n.ram, "drives": n.drives,
                     "drive_size": n.drive_size, "drive_reserve": n.drive_reserve},
            "workloads": [{"name": w.name, "kind": w.kind, "cores": w.cores,
                           "ram_bytes": w.ram, "capacity_bytes": w.capacity, "iops": w.iops}
                          for w in self.workloads],
            "rf": self.rf, "ec": self.ec, "ec_share_pct": self.ec_share_pct,
            "plan": self.plan, "awareness": self.awareness, "nodes_per_domain": self.domain,
            "nodes": self.nodes, "cvm_cores": self.cvm_cores, "cvm_ram": self.cvm_ram,
            "hypervisor_ram": self.hypervisor_ram, "target_cpu_pct": self.target_cpu_pct,
            "max_full_pct": self.max_full_pct, "data_reduction": self.data_reduction,
            "node_iops": self.node_iops, "afr_pct": self.afr_pct,
            "rebuild_rate": self.rebuild_rate, "replacement_hours": self.replacement_hours,
            "restore_hours": self.restore_hours,
        }


def validate(d: ClusterDesign) -> None:
    resiliency.check_rf(d.rf)
    resiliency.parse_plan(d.plan)
    n = d.node
    if n.cores < 1 or n.ram <= 0 or n.drives < 1 or n.drive_size <= 0:
        raise UserError("node hardware: --node-cores, --node-ram, --drives and --drive-size "
                        "must be positive")
    if n.drive_reserve >= n.drive_size:
        raise UserError("--drive-reserve must be smaller than --drive-size")
    if d.awareness not in resiliency.AWARENESS:
        raise UserError(f"--awareness must be node, block or rack, got {d.awareness}")
    if d.nodes_per_domain < 1:
        raise UserError("--nodes-per-block / --nodes-per-rack must be at least 1")
    if not d.workloads:
        raise UserError("give the demand: --workload FILE (from `assay size ... --json`) "
                        "and/or --cores, --ram, --capacity")
    for w in d.workloads:
        if min(w.cores, w.ram, w.capacity, w.iops) < 0:
            raise UserError(f"{w.name or w.kind}: demands cannot be negative")
    if d.nodes is not None and d.nodes < 1:
        raise UserError(f"--nodes must be at least 1, got {d.nodes}")
    if not 0 <= d.ec_share_pct <= 100:
        raise UserError("--ec-share is a percentage between 0 and 100")
    if not 0 < d.target_cpu_pct <= 100:
        raise UserError("--target-cpu is a percentage between 1 and 100")
    if not 0 < d.max_full_pct <= 100:
        raise UserError(f"--max-full is a percentage between 1 and 100, got {d.max_full_pct:g}")
    if d.afr_pct <= 0 or d.afr_pct >= 100 or d.rebuild_rate <= 0:
        raise UserError("--node-afr must be 0-100 % and --rebuild-rate positive")
    if d.replacement_hours <= 0 or d.restore_hours <= 0:
        raise UserError("--replacement-time and --restore-time must be positive")
    if cvm_cores(d) >= n.cores:
        raise UserError(f"the controller VM takes {cvm_cores(d):.1f} of the node's "
                        f"{n.cores} cores: nothing is left for workloads")
    if cvm_ram(d) + d.hypervisor_ram >= n.ram:
        raise UserError("the controller VM and hypervisor take all of the node's RAM")


def cvm_cores(d: ClusterDesign) -> float:
    """Workload-weighted CVM cores: sum_w cores_w / total x k_w, k = 4 (VDI, raw) or 6 (DBs)."""
    if d.cvm_cores is not None:
        return d.cvm_cores
    total = sum(w.cores for w in d.workloads)
    if total <= 0:
        return 4.0
    return sum(w.cores / total * CVM_CORES.get(w.kind, 4) for w in d.workloads)


def cvm_ram(d: ClusterDesign) -> int:
    return d.cvm_ram + (CVM_RAM_RF3 if d.rf == 3 else 0)

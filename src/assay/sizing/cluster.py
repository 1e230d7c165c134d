"""Cluster sizing: workloads' demands + node hardware -> node count that survives its failures.

Algorithm (`sizing-rules.md` §5): per-node supply after the controller VM; the smallest node
count whose survivors (after the spare failure domains are lost) still run every workload at
<= 80 % CPU, fit its RAM, and keep storage <= 90 % full; never below the RF, self-healing,
block/rack and EC minimums. Then the figures an architect signs off: usable and recommended
capacity, utilisation before and after the failure, rebuild time and annual loss probability.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.exitcodes import UserError
from assay.sizing import capacity, reliability, resiliency
from assay.sizing.explain import (
    GIB,
    Bytes,
    Figure,
    Rate,
    Result,
    at_least,
    at_most,
    ceil_div,
)

SRC_CVM = "Nutanix Sizer wiki, CVM cores and memory (sizing-rules §1.6)"
SRC_CPU = "VMware vCAT: <= 80 % CPU; HA headroom (sizing-rules §1.8)"
SRC_REL = "sizing-rules §4.1 (many-to-many rebuild; Cowling's model)"

# CVM cores per node by workload (Sizer): 6 for databases and Exchange, 4 for the rest
CVM_CORES = {"exchange": 6, "oltp": 6, "sql": 6, "vdi": 4, "raw": 4}
CVM_RAM_DEFAULT = 32 * GIB  # large / all-flash platforms (Sizer); 20 GiB for VDI-only
CVM_RAM_RF3 = 8 * GIB  # Sizer add-on for RF3
MAX_NODES = 1000


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
                       iops=float(d.get("iops", 0.0)), name=name)
        except (KeyError, TypeError, ValueError):
            raise UserError(f"{name}: not the JSON of `assay size ... --json` (needs a demand "
                            f"with cores, ram_bytes and capacity_bytes)") from None


@dataclass(frozen=True)
class NodeSpec:
    cores: int
    ram: int  # bytes
    drives: int
    drive_size: int  # bytes
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
    data_reduction: float | None = None
    node_iops: float | None = None
    afr_pct: float = 5.0
    rebuild_rate: float = 200 * (1 << 20)  # bytes/s per node
    replacement_hours: float = 48.0
    workload_cvm: dict[str, float] = field(default_factory=dict)

    @property
    def domain(self) -> int:
        return 1 if self.awareness == "node" else self.nodes_per_domain


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
    if d.afr_pct <= 0 or d.afr_pct >= 100 or d.rebuild_rate <= 0:
        raise UserError("--node-afr must be 0-100 % and --rebuild-rate positive")
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


@dataclass(frozen=True)
class Totals:
    cores: float
    ram: float
    capacity: float
    iops: float


def totals(d: ClusterDesign) -> Totals:
    return Totals(sum(w.cores for w in d.workloads), sum(w.ram for w in d.workloads),
                  sum(w.capacity for w in d.workloads), sum(w.iops for w in d.workloads))


def overhead(d: ClusterDesign, nodes: int) -> float:
    """Physical bytes per logical byte at this node count (RF copies, or partly EC strips)."""
    if not d.ec:
        return float(d.rf)
    strip = resiliency.ec_strip(d.rf, nodes)
    ec = resiliency.ec_overhead(*strip) if strip else None
    return capacity.effective_overhead(d.rf, ec, d.ec_share_pct / 100)


def spare_of(d: ClusterDesign, nodes: int) -> int:
    plan = resiliency.parse_plan(d.plan)
    return resiliency.spare_nodes(resiliency.planned_failures(d.rf, nodes, plan), d.domain)


def minimum_nodes(d: ClusterDesign, nodes: int) -> int:
    """The floor from the rules alone: RF minimum plus the spares (self-healing), EC strip,
    and enough blocks/racks for awareness."""
    spare = spare_of(d, nodes)
    floor = resiliency.self_heal_min_nodes(d.rf, spare)
    if d.ec:
        floor = max(floor, resiliency.ec_min_nodes(d.rf))
    if d.awareness != "node":
        floor = max(floor, resiliency.min_domains(d.rf, d.ec) * d.domain)
    return floor


def fits(d: ClusterDesign, nodes: int, data_reduction: float = 1.0) -> bool:
    """Does this node count hold every rule and demand after its spare domains are lost?"""
    if d.awareness != "node" and nodes % d.domain:
        return False
    if nodes < minimum_nodes(d, nodes):
        return False
    t = totals(d)
    survivors = nodes - spare_of(d, nodes)
    if survivors < 1:
        return False
    n = d.node
    cores_ok = t.cores <= d.target_cpu_pct / 100 * survivors * (n.cores - cvm_cores(d)) + 1e-9
    ram_ok = t.ram <= survivors * (n.ram - cvm_ram(d) - d.hypervisor_ram) + 1e-9
    physical = t.capacity / data_reduction * overhead(d, nodes)
    storage_ok = physical <= capacity.RECOMMENDED_FULL * survivors * n.extent_store + 1e-9
    iops_ok = d.node_iops is None or t.iops <= survivors * d.node_iops + 1e-9
    return cores_ok and ram_ok and storage_ok and iops_ok


def nodes_needed(d: ClusterDesign, data_reduction: float = 1.0) -> int:
    for n in range(1, MAX_NODES + 1):
        if fits(d, n, data_reduction):
            return n
    raise UserError(f"the demand needs more than {MAX_NODES} of these nodes: use bigger nodes "
                    f"or split the workloads over several clusters")


def size(d: ClusterDesign) -> Result:
    validate(d)
    t = totals(d)
    needed = nodes_needed(d)
    n_nodes = d.nodes if d.nodes is not None else needed
    r = Result("cluster", inputs=_inputs(d))
    _supply(d, r, t, n_nodes, needed)
    _capacity(d, r, t, n_nodes)
    _utilisation(d, r, t, n_nodes)
    _reliability(d, r, t, n_nodes)
    plan = resiliency.parse_plan(d.plan)
    failures = resiliency.planned_failures(d.rf, n_nodes, plan)
    r.checks[:0] = resiliency.rule_checks(d.rf, n_nodes, failures, d.awareness, d.domain, d.ec)
    if d.nodes is not None:
        r.checks.insert(0, at_least("Enough nodes for the demand and the rules", d.nodes,
                                    needed, "nodes", "Nodes given", "sizing-rules §5"))
    r.notes.extend(_notes(d))
    r.notes.extend(reliability.CAVEATS)
    return r


def _inputs(d: ClusterDesign) -> dict[str, Any]:
    n = d.node
    return {
        "node": {"cores": n.cores, "ram": n.ram, "drives": n.drives, "drive_size": n.drive_size,
                 "drive_reserve": n.drive_reserve},
        "workloads": [{"name": w.name, "kind": w.kind, "cores": w.cores, "ram_bytes": w.ram,
                       "capacity_bytes": w.capacity, "iops": w.iops} for w in d.workloads],
        "rf": d.rf, "ec": d.ec, "ec_share_pct": d.ec_share_pct, "plan": d.plan,
        "awareness": d.awareness, "nodes_per_domain": d.domain, "nodes": d.nodes,
        "cvm_cores": d.cvm_cores, "cvm_ram": d.cvm_ram, "hypervisor_ram": d.hypervisor_ram,
        "target_cpu_pct": d.target_cpu_pct, "data_reduction": d.data_reduction,
        "node_iops": d.node_iops, "afr_pct": d.afr_pct, "rebuild_rate": d.rebuild_rate,
        "replacement_hours": d.replacement_hours,
    }


def _supply(d: ClusterDesign, r: Result, t: Totals, n_nodes: int, needed: int) -> None:
    n = d.node
    cvm_c, cvm_r = cvm_cores(d), cvm_ram(d)
    r.add("cvm_cores", Figure(
        "CVM cores per node", cvm_c, "cores",
        "given" if d.cvm_cores is not None else "sum_w cores_w / total_cores x k_w "
        "(k = 6 Exchange/SQL, 4 VDI/raw)",
        {w.name or w.kind: w.cores for w in d.workloads}, SRC_CVM))
    r.add("cvm_ram", Figure(
        "CVM RAM per node", cvm_r, "bytes", "cvm_ram_base + 8 GiB if RF3",
        {"cvm_ram_base": Bytes(d.cvm_ram), "rf": d.rf}, SRC_CVM))
    cores = n.cores - cvm_c
    ram = n.ram - cvm_r - d.hypervisor_ram
    r.add("cores_per_node", Figure("Cores per node for workloads", cores, "cores",
                                   "node_cores - cvm_cores", {"node_cores": n.cores}, SRC_CVM))
    r.add("ram_per_node", Figure("RAM per node for workloads", ram, "bytes",
                                 "node_ram - cvm_ram - hypervisor_ram",
                                 {"node_ram": Bytes(n.ram),
                                  "hypervisor_ram": Bytes(d.hypervisor_ram)},
                                 SRC_CVM))
    target = d.target_cpu_pct / 100
    phys = t.capacity * overhead(d, n_nodes)
    r.add("nodes_for_cpu", Figure(
        "Nodes for CPU (before spares)", ceil_div(t.cores, target * cores), "nodes",
        "ceil(demand_cores / (target_cpu x cores_per_node))",
        {"demand_cores": t.cores, "target_cpu": target, "cores_per_node": cores}, SRC_CPU))
    r.add("nodes_for_ram", Figure(
        "Nodes for RAM (before spares)", ceil_div(t.ram, ram), "nodes",
        "ceil(demand_ram / ram_per_node)",
        {"demand_ram": Bytes(t.ram), "ram_per_node": Bytes(ram)}, SRC_CVM))
    r.add("nodes_for_storage", Figure(
        "Nodes for storage (before spares)",
        ceil_div(phys, capacity.RECOMMENDED_FULL * n.extent_store), "nodes",
        "ceil(demand_capacity x overhead / (0.9 x extent_store_per_node))",
        {"demand_capacity": Bytes(t.capacity), "overhead": overhead(d, n_nodes),
         "extent_store_per_node": Bytes(n.extent_store)}, capacity.SRC_KB1557))
    if d.node_iops is not None:
        r.add("nodes_for_iops", Figure(
            "Nodes for IOPS (before spares)", ceil_div(t.iops, d.node_iops), "nodes",
            "ceil(demand_iops / node_iops)", {"demand_iops": t.iops, "node_iops": d.node_iops},
            "your measured per-node IOPS"))
    plan = resiliency.parse_plan(d.plan)
    failures = resiliency.planned_failures(d.rf, n_nodes, plan)
    spare = spare_of(d, n_nodes)
    r.add("spare_nodes", Figure(
        f"Spare nodes (N+{spare})", spare, "nodes", "planned_failures x nodes_per_domain",
        {"planned_failures": failures, "nodes_per_domain": d.domain, "rf": d.rf,
         "rule": "auto: RF2 N+1, N+2 above 24 nodes; RF3 N+2" if plan is None else d.plan},
        resiliency.SRC_SPARE))
    r.add("nodes_minimum", Figure(
        "Minimum nodes from the rules", minimum_nodes(d, n_nodes), "nodes",
        "max(rf_minimum + spare_nodes, EC minimum, min_domains x nodes_per_domain)",
        {"rf_minimum": resiliency.min_nodes(d.rf), "spare_nodes": spare, "ec": d.ec,
         "awareness": d.awareness}, resiliency.SRC_MIN))
    r.add("nodes_needed", Figure(
        "Nodes needed", needed, "nodes",
        "smallest N meeting every demand with N - spare nodes and every rule minimum",
        {}, "sizing-rules §5"))
    r.add("nodes", Figure(
        "Nodes" + (" (given)" if d.nodes is not None else ""), n_nodes, "nodes",
        "given" if d.nodes is not None else "nodes_needed", {}, "sizing-rules §5"))
    if d.awareness != "node":
        r.add("domains", Figure(
            f"{d.awareness.capitalize()}s", n_nodes / d.domain, f"{d.awareness}s",
            "nodes / nodes_per_domain", {"nodes_per_domain": d.domain}, resiliency.SRC_BLOCK))
    if d.ec:
        strip = resiliency.ec_strip(d.rf, n_nodes)
        r.add("ec_overhead", Figure(
            "EC-X strip overhead", resiliency.ec_overhead(*strip) if strip else d.rf, "x",
            "(data + parity) / data" if strip else "too few nodes for EC-X: RF copies",
            {"strip": f"{strip[0]}/{strip[1]}" if strip else "none", "nodes": n_nodes},
            resiliency.SRC_EC))
    if d.data_reduction and d.data_reduction > 1:
        r.add("nodes_needed_with_reduction", Figure(
            f"Nodes needed if {d.data_reduction:g}:1 data reduction holds",
            nodes_needed(d, d.data_reduction), "nodes",
            "as nodes_needed, with demand_capacity / data_reduction",
            {"data_reduction": d.data_reduction}, "your ratio: not guaranteed (seed 000)"))


def _capacity(d: ClusterDesign, r: Result, t: Totals, n_nodes: int) -> None:
    n = d.node
    spare = spare_of(d, n_nodes)
    caps = [float(n.extent_store)] * n_nodes
    r.add("raw", Figure("Raw capacity", n.raw * n_nodes, "bytes",
                        "nodes x drives x drive_size",
                        {"nodes": n_nodes, "drives": n.drives, "drive_size": Bytes(n.drive_size)},
                        "Sizer wiki, Sizing Details (sizing-rules §1.4)"))
    r.add("extent_store", Figure("Extent store", n.extent_store * n_nodes, "bytes",
                                 "nodes x drives x (drive_size - drive_reserve)",
                                 {"drive_reserve": Bytes(n.drive_reserve)},
                                 "Sizer wiki, Storage Calculator (sizing-rules §1.4)"))
    ovh = overhead(d, n_nodes)
    if d.ec:
        usable = capacity.usable_ec(caps, ovh, spare)
        formula = "(extent_store - spare nodes) / overhead"
    else:
        usable = capacity.usable_rf(caps, d.rf, spare)
        formula = "(extent_store - spare nodes) / RF (water-filling for mixed nodes)"
    r.add("usable", Figure("Usable logical capacity after N+x", usable, "bytes", formula,
                           {"spare_nodes": spare, "overhead": ovh}, capacity.SRC_MIXED))
    rec = capacity.recommended(usable)
    r.add("recommended", Figure("Recommended maximum logical data", rec, "bytes",
                                "0.9 x usable", {"usable": Bytes(usable)}, capacity.SRC_KB1557))
    r.checks.append(at_most("Storage <= 90 % of the capacity after the failure", t.capacity,
                            rec, "bytes", "Logical data (no data reduction)",
                            capacity.SRC_KB1557))
    if d.data_reduction and d.data_reduction > 1:
        r.add("recommended_effective", Figure(
            f"Recommended maximum with {d.data_reduction:g}:1 data reduction",
            rec * d.data_reduction, "bytes", "recommended x data_reduction",
            {"data_reduction": d.data_reduction}, "your ratio: not guaranteed (seed 000)"))


def _utilisation(d: ClusterDesign, r: Result, t: Totals, n_nodes: int) -> None:
    cores = r.figures["cores_per_node"].value
    ram = r.figures["ram_per_node"].value
    survivors = n_nodes - spare_of(d, n_nodes)
    for key, label, demand, per in (("cpu", "CPU", t.cores, cores),
                                    ("ram", "RAM", Bytes(t.ram), ram)):
        normal = 100 * demand / (n_nodes * per)
        after = 100 * demand / (survivors * per) if survivors > 0 else float("inf")
        r.add(f"{key}_normal", Figure(f"{label} utilisation, all nodes up", normal, "%",
                                      f"demand / (nodes x {key}_per_node)",
                                      {"demand": demand, "nodes": n_nodes}, SRC_CPU))
        r.add(f"{key}_after_failure", Figure(
            f"{label} utilisation after losing the spare nodes", after, "%",
            f"demand / ((nodes - spare_nodes) x {key}_per_node)",
            {"demand": demand, "survivors": survivors}, SRC_CPU))
    r.checks.append(at_most("CPU <= target after the worst failure",
                            r.figures["cpu_after_failure"].value, d.target_cpu_pct, "%",
                            "CPU after the failure", SRC_CPU))
    r.checks.append(at_most("RAM fits after the worst failure",
                            r.figures["ram_after_failure"].value, 100.0, "%",
                            "RAM after the failure", "Nutanix 201: N+1 for compute too"))


def _reliability(d: ClusterDesign, r: Result, t: Totals, n_nodes: int) -> None:
    ovh = overhead(d, n_nodes)
    per_node = t.capacity * ovh / n_nodes
    spare = spare_of(d, n_nodes)
    afr = d.afr_pct / 100
    if spare == 0:
        window = d.replacement_hours
        formula = "N+0: no room to re-protect, so the window is the replacement time"
    else:
        window = reliability.rebuild_hours(per_node, n_nodes, d.rebuild_rate)
        formula = "(60 s + data_per_node / ((nodes - 1) x rebuild_rate)) / 3600"
    r.add("rebuild_hours", Figure("Rebuild time after a node failure", window, "h", formula,
                                  {"data_per_node": Bytes(per_node), "nodes": n_nodes,
                                   "rebuild_rate": Rate(d.rebuild_rate)}, SRC_REL))
    tolerated = resiliency.fault_tolerance(d.rf)
    rate = reliability.loss_rate_per_hour(n_nodes, afr, window, tolerated)
    r.add("loss_probability", Figure(
        "Annual data-loss probability", reliability.annual_loss_probability(rate), "1/yr",
        "1 - exp(-8760 x N lambda x prod_{i=1..FT} (N-i) lambda T / FT!)",
        {"nodes": n_nodes, "node_afr": afr, "T_hours": window, "FT": tolerated}, SRC_REL))
    if d.ec:
        strip = resiliency.ec_strip(d.rf, n_nodes)
        if strip:
            r.add("ec_group_loss", Figure(
                "Annual loss probability of one EC strip", reliability.ec_group_annual_loss(
                    strip[0], strip[1], afr, window / 24), "1/yr",
                "(365 / days) x sum_{k > p} C(d+p, k) q^k (1-q)^(d+p-k), q = 1 - exp(-AFR "
                "x days / 365)", {"strip": f"{strip[0]}/{strip[1]}", "days": window / 24},
                "Backblaze erasure-coding-durability (sizing-rules §4.1)"))


def _notes(d: ClusterDesign) -> list[str]:
    notes = ["No data reduction and no EC saving are assumed unless you give them "
             "(seed 000: guarantee the outcome, not the vendor's ratio)."]
    if d.ec:
        notes.append(f"EC-X is post-process on write-cold data only: {d.ec_share_pct:g} % of "
                     f"the theoretical saving is counted (Odgers: size with 50-80 %).")
    if d.rf == 3:
        notes.append("RF3 needs cluster redundancy factor 3 and a larger CVM (+8 GiB here).")
    return notes

"""The node count: the smallest cluster whose survivors still carry every demand and rule.

Per-node supply is what the controller VM and hypervisor leave; the survivors are the nodes
left after the spare failure domains are lost (`sizing-rules.md` §5).
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.exitcodes import UserError
from assay.sizing import capacity, resiliency
from assay.sizing.cluster.design import ClusterDesign, cvm_cores, cvm_ram

MAX_NODES = 1000


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


def planned_failures(d: ClusterDesign, nodes: int) -> int:
    return resiliency.planned_failures(d.rf, nodes, resiliency.parse_plan(d.plan))


def spare_of(d: ClusterDesign, nodes: int) -> int:
    return resiliency.spare_nodes(planned_failures(d, nodes), d.domain)


def minimum_nodes(d: ClusterDesign, nodes: int) -> int:
    """The floor from the rules alone: RF minimum plus the spares (self-healing), EC strip,
    and enough blocks/racks for awareness."""
    floor = resiliency.self_heal_min_nodes(d.rf, spare_of(d, nodes))
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
    storage_ok = physical <= d.ceiling * survivors * n.extent_store + 1e-9
    iops_ok = d.node_iops is None or t.iops <= survivors * d.node_iops + 1e-9
    return cores_ok and ram_ok and storage_ok and iops_ok


def nodes_needed(d: ClusterDesign, data_reduction: float = 1.0) -> int:
    for n in range(1, MAX_NODES + 1):
        if fits(d, n, data_reduction):
            return n
    raise UserError(f"the demand needs more than {MAX_NODES} of these nodes: use bigger nodes "
                    f"or split the workloads over several clusters")

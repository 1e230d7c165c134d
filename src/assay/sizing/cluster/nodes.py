"""Figures behind the node count: what a node supplies, what each resource needs, the spares."""

from __future__ import annotations

from assay.sizing import resiliency
from assay.sizing.cluster.design import SRC_CVM, ClusterDesign, cvm_cores, cvm_ram
from assay.sizing.cluster.fit import (
    Totals,
    minimum_nodes,
    nodes_needed,
    overhead,
    planned_failures,
    spare_of,
)
from assay.sizing.explain import BinBytes, Bytes, Figure, Result, ceil_div

SRC_CPU = "VMware vCAT: <= 80 % CPU; HA headroom (sizing-rules §1.8)"
SRC_CEILING = "Nutanix KB 1557: M = 0.9 x (T - largest spare nodes) (sizing-rules §1.4)"


def add_supply(d: ClusterDesign, r: Result, t: Totals, n_nodes: int) -> None:
    n = d.node
    cvm_c, cvm_r = cvm_cores(d), cvm_ram(d)
    r.add("cvm_cores", Figure(
        "CVM cores per node", cvm_c, "cores",
        "given" if d.cvm_cores is not None else "sum_w cores_w / total_cores x k_w "
        "(k = 6 Exchange/SQL, 4 VDI/raw)",
        {w.name or w.kind: w.cores for w in d.workloads}, SRC_CVM))
    r.add("cvm_ram", Figure(
        "CVM RAM per node", cvm_r, "bytes", "cvm_ram_base + 8 GiB if RF3",
        {"cvm_ram_base": BinBytes(d.cvm_ram), "rf": d.rf}, SRC_CVM, binary=True))
    cores = n.cores - cvm_c
    ram = n.ram - cvm_r - d.hypervisor_ram
    r.add("cores_per_node", Figure("Cores per node for workloads", cores, "cores",
                                   "node_cores - cvm_cores", {"node_cores": n.cores}, SRC_CVM))
    r.add("ram_per_node", Figure("RAM per node for workloads", ram, "bytes",
                                 "node_ram - cvm_ram - hypervisor_ram",
                                 {"node_ram": BinBytes(n.ram),
                                  "hypervisor_ram": BinBytes(d.hypervisor_ram)},
                                 SRC_CVM, binary=True))
    target = d.target_cpu_pct / 100
    phys = t.capacity * overhead(d, n_nodes)
    r.add("nodes_for_cpu", Figure(
        "Nodes for CPU (before spares)", ceil_div(t.cores, target * cores), "nodes",
        "ceil(demand_cores / (target_cpu x cores_per_node))",
        {"demand_cores": t.cores, "target_cpu": target, "cores_per_node": cores}, SRC_CPU))
    r.add("nodes_for_ram", Figure(
        "Nodes for RAM (before spares)", ceil_div(t.ram, ram), "nodes",
        "ceil(demand_ram / ram_per_node)",
        {"demand_ram": BinBytes(t.ram), "ram_per_node": BinBytes(ram)}, SRC_CVM))
    r.add("nodes_for_storage", Figure(
        "Nodes for storage (before spares)",
        ceil_div(phys, d.ceiling * n.extent_store), "nodes",
        "ceil(demand_capacity x overhead / (max_full x extent_store_per_node))",
        {"demand_capacity": Bytes(t.capacity), "overhead": overhead(d, n_nodes),
         "max_full": d.ceiling, "extent_store_per_node": Bytes(n.extent_store)}, SRC_CEILING))
    if d.node_iops is not None:
        r.add("nodes_for_iops", Figure(
            "Nodes for IOPS (before spares)", ceil_div(t.iops, d.node_iops), "nodes",
            "ceil(demand_iops / node_iops)", {"demand_iops": t.iops, "node_iops": d.node_iops},
            "your measured per-node IOPS"))


def add_node_count(d: ClusterDesign, r: Result, n_nodes: int, needed: int) -> None:
    plan = resiliency.parse_plan(d.plan)
    spare = spare_of(d, n_nodes)
    r.add("spare_nodes", Figure(
        f"Spare nodes (N+{spare})", spare, "nodes", "planned_failures x nodes_per_domain",
        {"planned_failures": planned_failures(d, n_nodes), "nodes_per_domain": d.domain,
         "rf": d.rf,
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

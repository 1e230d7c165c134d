"""CPU and RAM utilisation with all nodes up and after the spare failure domains are lost."""

from __future__ import annotations

from assay.sizing.cluster.design import ClusterDesign
from assay.sizing.cluster.fit import Totals, spare_of
from assay.sizing.cluster.nodes import SRC_CPU
from assay.sizing.explain import BinBytes, Figure, Result, at_most


def add_utilisation(d: ClusterDesign, r: Result, t: Totals, n_nodes: int) -> None:
    cores = r.value("cores_per_node")
    ram = r.value("ram_per_node")
    survivors = n_nodes - spare_of(d, n_nodes)
    for key, label, demand, per in (("cpu", "CPU", t.cores, cores),
                                    ("ram", "RAM", BinBytes(t.ram), ram)):
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
                            r.value("cpu_after_failure"), d.target_cpu_pct, "%",
                            "CPU after the failure", SRC_CPU))
    r.checks.append(at_most("RAM fits after the worst failure",
                            r.value("ram_after_failure"), 100.0, "%",
                            "RAM after the failure", "Nutanix 201: N+1 for compute too"))

"""Cluster sizing: workloads' demands + node hardware -> node count that survives its failures.

Algorithm (`sizing-rules.md` §5): per-node supply after the controller VM; the smallest node
count whose survivors (after the spare failure domains are lost) still run every workload at
<= 80 % CPU, fit its RAM, and keep storage under the capacity ceiling (90 % by default); never
below the RF, self-healing, block/rack and EC minimums. Then the figures an architect signs
off: usable and recommended capacity, utilisation before and after the failure, rebuild
time, loss probability, durability and availability in nines.

Modules: `design` (inputs, CVM), `fit` (the node-count search), `nodes`, `storage`,
`utilisation`, `durability` (the figures).
"""

from __future__ import annotations

from assay.sizing import reliability, resiliency
from assay.sizing.cluster.design import (
    ClusterDesign,
    Demand,
    NodeSpec,
    cvm_cores,
    cvm_ram,
    validate,
)
from assay.sizing.cluster.durability import add_durability
from assay.sizing.cluster.fit import fits, minimum_nodes, nodes_needed, planned_failures, totals
from assay.sizing.cluster.nodes import add_node_count, add_supply
from assay.sizing.cluster.storage import add_capacity
from assay.sizing.cluster.utilisation import add_utilisation
from assay.sizing.explain import Result, at_least

__all__ = ["ClusterDesign", "Demand", "NodeSpec", "cvm_cores", "cvm_ram", "fits",
           "minimum_nodes", "nodes_needed", "size"]


def size(d: ClusterDesign) -> Result:
    validate(d)
    t = totals(d)
    needed = nodes_needed(d)
    n_nodes = d.nodes if d.nodes is not None else needed
    r = Result("cluster", inputs=d.inputs())
    add_supply(d, r, t, n_nodes)
    add_node_count(d, r, n_nodes, needed)
    add_capacity(d, r, t, n_nodes)
    add_utilisation(d, r, t, n_nodes)
    add_durability(d, r, t, n_nodes)
    r.checks[:0] = resiliency.rule_checks(d.rf, n_nodes, planned_failures(d, n_nodes),
                                          d.awareness, d.domain, d.ec)
    if d.nodes is not None:
        r.checks.insert(0, at_least("Enough nodes for the demand and the rules", d.nodes,
                                    needed, "nodes", "Nodes given", "sizing-rules §5"))
    r.notes.extend(_notes(d))
    r.notes.extend(reliability.CAVEATS)
    return r


def _notes(d: ClusterDesign) -> list[str]:
    notes = ["No data reduction and no EC saving are assumed unless you give them "
             "(seed 000: guarantee the outcome, not the vendor's ratio).",
             "Sizes are decimal as drives are sold (3.84TB = 3.84 x 10^12 bytes); memory is "
             "shown in GiB."]
    if d.ec:
        notes.append(f"EC-X is post-process on write-cold data only: {d.ec_share_pct:g} % of "
                     f"the theoretical saving is counted (Odgers: size with 50-80 %).")
    if d.rf == 3:
        notes.append("RF3 needs cluster redundancy factor 3 and a larger CVM (+8 GiB here).")
    return notes

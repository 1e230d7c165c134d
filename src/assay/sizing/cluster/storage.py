"""Cluster capacity: raw -> extent store -> usable after N+x -> recommended maximum."""

from __future__ import annotations

from assay.sizing import capacity
from assay.sizing.cluster.design import ClusterDesign
from assay.sizing.cluster.fit import Totals, overhead, spare_of
from assay.sizing.explain import Bytes, Figure, Result, at_most


def add_capacity(d: ClusterDesign, r: Result, t: Totals, n_nodes: int) -> None:
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
    rec = capacity.recommended(usable, d.ceiling)
    ceiling = f"{d.max_full_pct:g} %"
    source = capacity.SRC_KB1557 if d.max_full_pct == 90 else "your ceiling (--max-full)"
    r.add("recommended", Figure(f"Recommended maximum logical data ({ceiling} full)", rec,
                                "bytes", "max_full x usable",
                                {"max_full": d.ceiling, "usable": Bytes(usable)}, source))
    r.checks.append(at_most(f"Storage <= {ceiling} of the capacity after the failure",
                            t.capacity, rec, "bytes", "Logical data (no data reduction)",
                            source))
    if d.data_reduction and d.data_reduction > 1:
        r.add("recommended_effective", Figure(
            f"Recommended maximum with {d.data_reduction:g}:1 data reduction",
            rec * d.data_reduction, "bytes", "recommended x data_reduction",
            {"data_reduction": d.data_reduction}, "your ratio: not guaranteed (seed 000)"))

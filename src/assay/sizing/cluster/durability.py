"""Rebuild time, data-loss probability, durability and availability in nines (sizing-rules §4)."""

from __future__ import annotations

from assay.sizing import reliability, resiliency
from assay.sizing.cluster.design import ClusterDesign
from assay.sizing.cluster.fit import Totals, overhead, spare_of
from assay.sizing.explain import Bytes, Figure, Rate, Result

SRC_REL = "sizing-rules §4.1 (many-to-many rebuild; Cowling's model)"
SRC_NINES = "Cowling, How many nines is my storage system? (sizing-rules §4.1)"


def add_durability(d: ClusterDesign, r: Result, t: Totals, n_nodes: int) -> None:
    per_node = t.capacity * overhead(d, n_nodes) / n_nodes
    afr = d.afr_pct / 100
    if spare_of(d, n_nodes) == 0:
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
    loss = reliability.annual_loss_probability(rate)
    r.add("loss_probability", Figure(
        "Annual data-loss probability", loss, "1/yr",
        "1 - exp(-8760 x N lambda x prod_{i=1..FT} (N-i) lambda T / FT!)",
        {"nodes": n_nodes, "node_afr": afr, "T_hours": window, "FT": tolerated}, SRC_REL))
    r.add("durability_nines", Figure(
        "Durability, nines (annual)", reliability.nines(loss), "nines",
        "-log10(loss_probability)", {"loss_probability": loss}, SRC_NINES))
    down = reliability.unavailability(rate, d.restore_hours)
    r.add("availability", Figure(
        "Availability of the data, node failures only", 100 * (1 - down), "%",
        "1 - loss events per hour x restore_hours",
        {"loss_events_per_hour": rate, "restore_hours": d.restore_hours}, SRC_NINES))
    r.add("availability_nines", Figure(
        "Availability, nines", reliability.nines(down), "nines",
        "-log10(1 - availability)", {"unavailability": down}, SRC_NINES))
    if d.ec:
        strip = resiliency.ec_strip(d.rf, n_nodes)
        if strip:
            r.add("ec_group_loss", Figure(
                "Annual loss probability of one EC strip", reliability.ec_group_annual_loss(
                    strip[0], strip[1], afr, window / 24), "1/yr",
                "(365 / days) x sum_{k > p} C(d+p, k) q^k (1-q)^(d+p-k), q = 1 - exp(-AFR "
                "x days / 365)", {"strip": f"{strip[0]}/{strip[1]}", "days": window / 24},
                "Backblaze erasure-coding-durability (sizing-rules §4.1)"))

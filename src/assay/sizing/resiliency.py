"""Resiliency rules for a hyper-converged cluster (Nutanix as the reference model).

How many nodes a replication factor needs, how many spare nodes a design must carry (N+x), and
which erasure-coding strip a cluster of a given size uses. Sources: `sizing-rules.md` §1.2, §1.3,
§1.5 and seed 002 (Odgers, "Nutanix Sizing for Resiliency w/ Design Brews").
"""

from __future__ import annotations

from dataclasses import replace

from assay.exitcodes import UserError
from assay.sizing.explain import Check, at_least

SRC_MIN = "Nutanix 201 / Prism guide: RF2 >= 3 nodes, RF3 >= 5 (sizing-rules §1.2)"
SRC_SPARE = "Odgers, Sizing for Resiliency (seed 002; sizing-rules §1.3)"
SRC_EC = "Nutanix EC-X strip sizes by node count (sizing-rules §1.5)"
SRC_BLOCK = ("WhatMatrix / Prism guide: block awareness needs 3 blocks (RF2), 5 (RF3) "
             "(sizing-rules §1.2)")

LARGE_CLUSTER = 24  # above 24 nodes, N+2 even with RF2 (seed 002)
AWARENESS = ("node", "block", "rack")
RF3_SINGLE_HEAL_NODES = 6  # "If you only wish to self heal from a single node failure, six
# nodes is an option" (seed 002): documented, but below the RF3 N+2 minimum
RF3_OPTION = ("RF3 on 6 nodes self-heals from a single node failure: a documented option "
              "(Odgers, seed 002) that breaks the RF3 N+2 minimum")


def check_rf(rf: int) -> None:
    if rf not in (2, 3):
        raise UserError(f"--rf must be 2 or 3 (the replication factors an HCI cluster offers), "
                        f"got {rf}")


def fault_tolerance(rf: int) -> int:
    """Simultaneous failures the data survives: RF - 1 (FT1 with RF2, FT2 with RF3)."""
    check_rf(rf)
    return rf - 1


def min_nodes(rf: int) -> int:
    """RF2 keeps 3 metadata copies and RF3 keeps 5, hence 3 and 5 nodes (§1.2)."""
    check_rf(rf)
    return {2: 3, 3: 5}[rf]


def self_heal_min_nodes(rf: int, failures: int) -> int:
    """Nodes needed to re-protect to full RF after `failures` node losses.

    RF3 self-heals from one failure with 6 nodes and from two with 7 (seed 002); a 4-node RF2
    cluster heals into a resilient 3-node one (Odgers, Part 9).
    """
    return min_nodes(rf) + failures


def min_domains(rf: int, ec: bool = False) -> int:
    """Blocks (or racks) needed for block/rack awareness: 3/5, or 4/6 with EC-X (§1.2)."""
    check_rf(rf)
    if ec:
        return {2: 4, 3: 6}[rf]
    return {2: 3, 3: 5}[rf]


def parse_plan(plan: str) -> int | None:
    """`auto` -> None; `n+0`, `n+1`, `n+2` -> the number of failure domains held spare."""
    p = plan.strip().lower().replace(" ", "")
    if p == "auto":
        return None
    if p in ("n+0", "n+1", "n+2", "n+3"):
        return int(p[2:])
    raise UserError(f"--plan must be auto, n+0, n+1 or n+2, got {plan}")


def planned_failures(rf: int, nodes: int, plan: int | None) -> int:
    """Failure domains held spare: RF2 -> N+1 (N+2 above 24 nodes), RF3 -> N+2 (seed 002)."""
    if plan is not None:
        return plan
    if rf == 3:
        return 2
    return 2 if nodes > LARGE_CLUSTER else 1


def spare_nodes(failures: int, nodes_per_domain: int) -> int:
    """The spare capacity must cover whole failure domains: a block of 4 with RF2 -> N+4."""
    return failures * nodes_per_domain


def ec_strip(rf: int, nodes: int) -> tuple[int, int] | None:
    """(data, parity) for EC-X on `nodes` nodes (failover node included), or None if too few."""
    check_rf(rf)
    parity = rf - 1
    first = {2: 4, 3: 6}[rf]  # nodes >= data + parity + parity: 2/1 needs 4, 2/2 needs 6
    if nodes < first:
        return None
    return min(4, 2 + nodes - first), parity


def ec_overhead(data: int, parity: int) -> float:
    """Bytes written per byte stored: (d + p) / d (4/1 -> 1.25x, 4/2 -> 1.5x)."""
    return (data + parity) / data


def rule_checks(rf: int, nodes: int, failures: int, awareness: str, per_domain: int,
                ec: bool) -> list[Check]:
    """The resiliency rules a design must hold, each with its source."""
    checks = [at_least(f"RF{rf} minimum cluster size", nodes, min_nodes(rf), "nodes",
                       "Nodes", SRC_MIN)]
    if failures == 0:
        checks.append(at_least("Never size N+0", failures, 1, "spare domains",
                               "Spare failure domains", SRC_SPARE))
    if rf == 3:
        n2 = at_least("RF3: size for N+2 as a minimum", failures, 2,
                      "spare domains", "Spare failure domains", SRC_SPARE)
        if not n2.ok and failures == 1 and nodes >= RF3_SINGLE_HEAL_NODES:
            n2 = replace(n2, message=f"{n2.message}. {RF3_OPTION}")
        checks.append(n2)
    elif nodes > LARGE_CLUSTER:
        checks.append(at_least(f"RF2 above {LARGE_CLUSTER} nodes: N+2", failures, 2,
                               "spare domains", "Spare failure domains", SRC_SPARE))
    heal = spare_nodes(failures, per_domain)
    if failures:
        heals = at_least(f"RF{rf} self-heals after losing {heal} node(s)", nodes,
                         self_heal_min_nodes(rf, heal), "nodes", "Nodes", SRC_SPARE)
        if not heals.ok and rf == 3 and heal == 2 and nodes == RF3_SINGLE_HEAL_NODES:
            heals = replace(heals, message=f"{heals.message}. {RF3_OPTION}; choose it "
                                           f"explicitly with --plan n+1")
        checks.append(heals)
    if awareness != "node":
        domains = nodes // per_domain
        checks.append(at_least(
            f"{awareness.capitalize()} awareness needs {min_domains(rf, ec)} {awareness}s",
            domains, min_domains(rf, ec), f"{awareness}s", f"{awareness.capitalize()}s",
            SRC_BLOCK))
    if ec:
        checks.append(at_least(
            f"EC-X with RF{rf} needs {ec_min_nodes(rf)} nodes", nodes, ec_min_nodes(rf),
            "nodes", "Nodes", SRC_EC))
    return checks


def ec_min_nodes(rf: int) -> int:
    return {2: 4, 3: 6}[rf]

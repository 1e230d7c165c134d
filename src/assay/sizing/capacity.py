"""Capacity arithmetic: raw -> after spares -> replicable (RF or EC) -> recommended maximum.

Sources: `sizing-rules.md` §1.4 (Sizer, KB 1557 as quoted by the Nutanix community, the mixed
node-size rule) and §1.5 (erasure coding).
"""

from __future__ import annotations

SRC_KB1557 = "Nutanix KB 1557: M = 0.9 x (T - largest spare nodes) (sizing-rules §1.4)"
SRC_MIXED = "Sizer wiki, clusters with mixed capacity nodes (sizing-rules §1.4)"
RECOMMENDED_FULL = 0.9  # clusters above ~90 % full show problems (KB 1557)


def without_spares(capacities: list[float], spare: int) -> list[float]:
    """The nodes left after losing the `spare` largest ones (the worst case for capacity)."""
    if spare <= 0:
        return list(capacities)
    return sorted(capacities)[:-spare] if spare < len(capacities) else []


def replicable(capacities: list[float], copies: int) -> float:
    """Largest logical data D with each of `copies` copies on a different node.

    Feasible iff sum_i min(C_i, D) >= copies x D. The sum is smallest when the k largest nodes
    are the capped ones, so D = min over k < copies of (sum of the other nodes) / (copies - k).
    20 TB + 10 TB nodes hold only 10 TB of RF2 data, not 15 (Sizer wiki).
    """
    if copies < 1:
        raise ValueError("copies must be at least 1")
    caps = sorted(capacities, reverse=True)
    best = float("inf")
    for k in range(copies):
        rest = sum(caps[k:])
        best = min(best, rest / (copies - k))
    return max(best, 0.0) if caps else 0.0


def usable_rf(capacities: list[float], rf: int, spare: int) -> float:
    """Logical capacity that stays fully protected after the spare nodes are lost."""
    return replicable(without_spares(capacities, spare), rf)


def usable_ec(capacities: list[float], overhead: float, spare: int) -> float:
    """EC-X: stripes spread over many nodes, so usable = surviving raw / overhead."""
    return sum(without_spares(capacities, spare)) / overhead


def effective_overhead(rf: int, ec_overhead: float | None, ec_share: float) -> float:
    """RF copies, less the share of the EC saving we count on (EC-X is post-process on
    write-cold data only; Odgers sizes with 50-80 % of the theoretical saving)."""
    if ec_overhead is None:
        return float(rf)
    return rf - ec_share * (rf - ec_overhead)


def recommended(usable: float, ceiling: float = RECOMMENDED_FULL) -> float:
    """The recommended maximum: 90 % (or the ceiling you choose, e.g. 80 % to add nodes in
    time, seed 000) of the capacity left after the spare nodes."""
    return ceiling * usable

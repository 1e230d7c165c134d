"""Rebuild time and data-loss probability (sizing-rules §4), with the caveats to print.

Many-to-many rebuild: every survivor re-protects a 1/(N-1) share. Data is spread over all nodes,
so with RF2 any second failure during the rebuild loses some data; with RF3 any third one.
"""

from __future__ import annotations

import math

HOURS_PER_YEAR = 8760.0
NODE_DETECTION_S = 60.0  # Nutanix starts re-protecting a lost node after 60 s

CAVEATS = (
    "Independent-failure Markov models are optimistic: they ignore correlated failures "
    "(power, firmware, a bad batch), latent sector errors and real repair-time distributions "
    "(Greenan, Plank, Wylie, 'Mean Time to Meaningless', HotStorage 2010).",
    "Random replica placement means almost any RF concurrent node failures lose some data; "
    "fewer copysets lose data less often (Cidon et al., USENIX ATC 2013).",
    "The node AFR and rebuild rate are assumptions: replace them with your platform's figures.",
    "Availability here counts node failures only (data unavailable from a loss until it is "
    "restored); planned maintenance, software and network outages come on top. Odgers "
    "quotes about 99.999 % measured for RF2 across the Nutanix install base, all causes "
    "(seed 002).",
)


def rebuild_hours(data_per_node: float, nodes: int, rate_per_node: float,
                  detection_s: float = NODE_DETECTION_S) -> float:
    """T = t_d + D / ((N - 1) x b): detection, then all survivors rebuild in parallel."""
    if nodes < 2:
        return math.inf
    return (detection_s + data_per_node / ((nodes - 1) * rate_per_node)) / 3600


def loss_rate_per_hour(nodes: int, afr: float, window_hours: float, tolerated: int) -> float:
    """Rate of losing data: one failure, then `tolerated` more among the survivors within T.

    RF2 (tolerated 1): N lambda x (N-1) lambda T; RF3 (2): ... x (N-2) lambda T / 2.
    """
    lam = afr / HOURS_PER_YEAR
    rate = nodes * lam
    for i in range(1, tolerated + 1):
        rate *= max(nodes - i, 0) * lam * window_hours
    return rate / math.factorial(tolerated)


def annual_loss_probability(rate_per_hour: float) -> float:
    """P(at least one loss in a year) = 1 - exp(-rate x 8760)."""
    return 1 - math.exp(-rate_per_hour * HOURS_PER_YEAR)


def ec_group_annual_loss(data: int, parity: int, afr: float, window_days: float) -> float:
    """One EC group of d+p shards (Backblaze durability model).

    q = 1 - exp(-AFR x days / 365); loss ~ (365 / days) x sum_{k > p} C(n,k) q^k (1-q)^(n-k).
    4+2, AFR 10 %, 1-day window -> 1.5e-7 per year (Backblaze's check value).
    """
    n = data + parity
    q = 1 - math.exp(-afr * window_days / 365)
    p_window = sum(math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(parity + 1, n + 1))
    return (365 / window_days) * p_window


def nines(failing_share: float) -> float:
    """How many nines: -log10 of the share that fails (99.999 % available -> 5 nines)."""
    if failing_share <= 0:
        return math.inf
    return -math.log10(failing_share)


def unavailability(rate_per_hour: float, restore_hours: float) -> float:
    """Share of the time the data is unavailable: loss events per hour x hours each lasts
    (the time to bring the data back once more than FT nodes failed)."""
    return min(1.0, rate_per_hour * restore_hours)

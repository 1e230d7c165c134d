"""The inverse question: how many mailboxes do the IOPS a platform achieved support?

Seed 003 targeted 7,260 IOPS for 60,000 mailboxes, achieved 8,798 and noted that 72,000
mailboxes would have passed too: 8,798 / 0.121 = 72,710.
"""

from __future__ import annotations

from assay.sizing.exchange.design import ExchangeDesign
from assay.sizing.exchange.profile import SRC_JETSTRESS, iops_per_mailbox
from assay.sizing.explain import Figure, Result, at_least, floor_div

SRC_INVERSE = "Jetstress: the most mailboxes whose target the run achieved (seed 003)"


def mailboxes_for_iops(iops: float, messages_per_day: int, headroom: bool = True) -> int:
    """Mailboxes of one profile whose Jetstress target fits in `iops`."""
    return floor_div(iops, iops_per_mailbox(messages_per_day, headroom))


def headroom_pct(measured: float, target: float) -> float:
    """How far a measured figure is above its target, % (seed 003: 8,798 vs 7,260 -> 21 %)."""
    return 100 * (measured / target - 1)


def add_inverse(d: ExchangeDesign, r: Result) -> None:
    if d.measured_iops is None:
        return
    measured, target = d.measured_iops, r.value("iops_total")
    per_mailbox = target / d.mailboxes  # weighted over the tiers
    r.add("measured_iops", Figure(
        "Measured Jetstress IOPS, all servers", measured, "IOPS", "given (--iops)", {},
        "your Jetstress run"))
    r.add("mailboxes_supported", Figure(
        "Mailboxes the measured IOPS support", floor_div(measured, per_mailbox), "mailboxes",
        "floor(measured_iops / iops_per_mailbox)",
        {"measured_iops": measured, "iops_per_mailbox": per_mailbox}, SRC_INVERSE))
    r.add("mailboxes_supported_per_server", Figure(
        "Mailboxes per server the measured IOPS support",
        floor_div(measured / d.servers, per_mailbox), "mailboxes",
        "floor(measured_iops / servers / iops_per_mailbox)", {"servers": d.servers},
        SRC_INVERSE))
    r.add("measured_headroom", Figure(
        "Measured IOPS above the target", headroom_pct(measured, target), "%",
        "measured_iops / iops_total - 1", {"iops_total": target}, SRC_INVERSE))
    r.checks.append(at_least(
        "Measured IOPS reach the Jetstress target", measured, target, "IOPS",
        "Measured Jetstress IOPS", SRC_JETSTRESS))

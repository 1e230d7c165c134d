"""Where mailboxes and databases sit in the DAG, with all servers up and after failures.

Every server hosts `copies / servers` of every mailbox copy. A failure does not move copies
(the lost server's copies are gone, the survivors keep theirs): it makes more of them active,
because the survivors share every active mailbox (sizing-rules §2.7).
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.sizing.exchange.design import ExchangeDesign
from assay.sizing.exchange.profile import MailboxTier, iops_per_mailbox
from assay.sizing.explain import ceil_div


@dataclass(frozen=True)
class ServerLoad:
    """One server's share of the DAG with `failed` servers down."""

    failed: int
    active: int  # active mailboxes: what Jetstress simulates on this server
    passive: int  # passive mailbox copies
    active_iops: float  # active x IOPS per mailbox: the Jetstress target
    passive_iops: float  # passive copies x IOPS per mailbox x passive share
    quota_bytes: float  # active x quota: the Jetstress database dataset

    @property
    def db_iops(self) -> float:
        """The storage load of all this server's copies, active and passive."""
        return self.active_iops + self.passive_iops


def copies_per_server(d: ExchangeDesign, t: MailboxTier) -> int:
    """Mailbox copies one server hosts; unchanged by a failure."""
    return ceil_div(t.count * d.copies, d.servers)


def active_per_server(d: ExchangeDesign, t: MailboxTier, failed: int) -> int:
    """Active mailboxes per server with `failed` servers down: survivors share all actives."""
    return ceil_div(t.count, d.servers - failed)


def server_load(d: ExchangeDesign, failed: int) -> ServerLoad:
    active = passive = 0
    active_iops = passive_iops = quota = 0.0
    share = d.passive_io_pct / 100
    for t in d.tiers:
        rate = iops_per_mailbox(t.messages_per_day, d.headroom)
        a = active_per_server(d, t, failed)
        p = copies_per_server(d, t) - a
        active, passive = active + a, passive + p
        active_iops += a * rate
        passive_iops += p * rate * share
        quota += a * t.mailbox_size
    return ServerLoad(failed, active, passive, active_iops, passive_iops, quota)


def database_copies_per_server(d: ExchangeDesign, databases: int) -> int:
    return ceil_div(databases * d.copies, d.servers)


def active_databases_per_server(d: ExchangeDesign, databases: int, failed: int) -> int:
    """The databases one server mounts (the ones Jetstress creates) with `failed` down."""
    return ceil_div(databases, d.servers - failed)


def load_name(failed: int) -> str:
    """`normal operation` or `N-1: 1 server down`, as the figures and the scenario say it."""
    if failed == 0:
        return "normal operation"
    return f"N-{failed}: {failed} server{'s' if failed > 1 else ''} down"

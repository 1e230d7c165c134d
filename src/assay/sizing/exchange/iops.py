"""Exchange database IOPS: per mailbox, for the whole DAG, and per server the ESRP way.

Two per-server numbers are kept apart. The Jetstress target is what Jetstress is given:
active mailboxes x IOPS per mailbox (seed 003: 20,000 x 0.121 = 2,420), with the passive
copies simulated only by their log reads. The DB IOPS of a server also count its passive
copies at `passive_io_pct` of an active copy's IO: that is the load the storage carries.
"""

from __future__ import annotations

from assay.sizing.exchange.design import ExchangeDesign
from assay.sizing.exchange.layout import ServerLoad, load_name
from assay.sizing.exchange.profile import (
    IO_HEADROOM,
    SRC_IOPS,
    SRC_JETSTRESS,
    SRC_N1,
    SRC_PASSIVE,
    iops_per_mailbox,
)
from assay.sizing.explain import Figure, Result


def add_iops(d: ExchangeDesign, r: Result, loads: tuple[ServerLoad, ServerLoad]) -> None:
    total = base_total = 0.0
    for i, t in enumerate(d.tiers, 1):
        tag = "" if len(d.tiers) == 1 else f"_tier{i}"
        base = iops_per_mailbox(t.messages_per_day, headroom=False)
        per_mbx = iops_per_mailbox(t.messages_per_day, d.headroom)
        r.add(f"iops_per_mailbox{tag}", Figure(
            f"IOPS per mailbox{f' (tier {i})' if tag else ''}", per_mbx, "IOPS",
            "round(0.00067 x messages_per_day x (1 + headroom), 3)",
            {"messages_per_day": t.messages_per_day,
             "headroom": IO_HEADROOM if d.headroom else 0.0, "without_headroom": base},
            SRC_IOPS))
        total += t.count * per_mbx
        base_total += t.count * base
    r.add("iops_total", Figure(
        "DB IOPS, all mailboxes (active copies)", total, "IOPS",
        "sum over tiers of mailboxes x iops_per_mailbox",
        {"mailboxes": d.mailboxes, "without_headroom": round(base_total, 1)}, SRC_IOPS))
    share = d.passive_io_pct / 100
    r.add("passive_io", Figure(
        "Passive copy IO, share of an active copy's", d.passive_io_pct, "%",
        "given" if d.passive_io_pct != 50 else "Exchange 2013 and later: about half",
        {}, SRC_PASSIVE))
    r.add("iops_all_copies", Figure(
        "DB IOPS, all database copies", total * (1 + (d.copies - 1) * share), "IOPS",
        "iops_total x (1 + (copies - 1) x passive_io)",
        {"iops_total": total, "copies": d.copies, "passive_io": share}, SRC_PASSIVE))
    for key, load in zip(("normal", "worst"), loads, strict=True):
        _per_server(d, r, key, load)


def _per_server(d: ExchangeDesign, r: Result, key: str, load: ServerLoad) -> None:
    name = load_name(load.failed)
    src = SRC_JETSTRESS if load.failed == 0 else f"{SRC_JETSTRESS}; {SRC_N1}"
    r.add(f"active_per_server_{key}", Figure(
        f"Active mailboxes per server, {name}", load.active, "mailboxes",
        "sum over tiers of ceil(mailboxes / (servers - failed))",
        {"mailboxes": d.mailboxes, "servers": d.servers, "failed": load.failed}, src))
    r.add(f"passive_per_server_{key}", Figure(
        f"Passive mailbox copies per server, {name}", load.passive, "mailboxes",
        "sum over tiers of ceil(mailboxes x copies / servers) - active",
        {"copies": d.copies, "servers": d.servers}, SRC_JETSTRESS))
    r.add(f"jetstress_iops_{key}", Figure(
        f"Jetstress target IOPS per server, {name}", load.active_iops, "IOPS",
        "sum over tiers of active mailboxes x iops_per_mailbox",
        {"active": load.active}, src))
    r.add(f"db_iops_per_server_{key}", Figure(
        f"DB IOPS per server incl. passive copies, {name}", load.db_iops, "IOPS",
        "jetstress_iops + passive copies x iops_per_mailbox x passive_io",
        {"jetstress_iops": load.active_iops, "passive": load.passive,
         "passive_io": d.passive_io_pct / 100}, SRC_PASSIVE))

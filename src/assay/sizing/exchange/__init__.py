"""Exchange 2013/2016/2019 mailbox role sizing, after the Server Role Requirements Calculator,
with the validation written the ESRP way (Jetstress per server, normal operation and N-1).

The modules, one concern each: `profile` (per-mailbox tables), `design` (inputs and their
validation), `layout` (copies and active mailboxes per server), `iops`, `compute` (CPU and
RAM), `storage` (Jetstress dataset vs production capacity), `inverse` (mailboxes a measured
IOPS figure supports).
"""

from __future__ import annotations

from assay.sizing.exchange.compute import add_cpu, add_memory
from assay.sizing.exchange.design import ExchangeDesign, validate
from assay.sizing.exchange.inverse import add_inverse, headroom_pct, mailboxes_for_iops
from assay.sizing.exchange.iops import add_iops
from assay.sizing.exchange.layout import (
    ServerLoad,
    active_per_server,
    copies_per_server,
    load_name,
    server_load,
)
from assay.sizing.exchange.profile import (
    BASE_MESSAGE_SIZE,
    PASSIVE_IO_PCT,
    SRC_JETSTRESS,
    SRC_N1,
    MailboxTier,
    cache_per_mailbox,
    iops_per_mailbox,
    log_factor,
    mailbox_size_on_disk,
    megacycles_per_core,
    megacycles_per_mailbox,
    next_ram_size,
)
from assay.sizing.exchange.storage import add_capacity
from assay.sizing.explain import Result, SideBySide

__all__ = [
    "BASE_MESSAGE_SIZE", "PASSIVE_IO_PCT", "ExchangeDesign", "MailboxTier", "ServerLoad",
    "active_per_server", "cache_per_mailbox", "copies_per_server", "headroom_pct",
    "iops_per_mailbox", "load_name", "log_factor", "mailbox_size_on_disk", "mailboxes_for_iops",
    "megacycles_per_core", "megacycles_per_mailbox", "next_ram_size", "server_load", "size",
    "validate",
]


def size(d: ExchangeDesign) -> Result:
    validate(d)
    r = Result("exchange", inputs=d.inputs())
    loads = (server_load(d, 0), server_load(d, d.worst_failures))
    add_iops(d, r, loads)
    add_cpu(d, r)
    add_memory(d, r)
    add_capacity(d, r, loads)
    add_inverse(d, r)
    r.views.append(jetstress_view(loads))
    r.notes.extend(_notes(d))
    ram = d.ram_per_server if d.ram_per_server else r.value("ram_recommended")
    r.demand = {
        "kind": "exchange",
        "cores": d.servers * d.cores_per_server,
        "ram_bytes": d.servers * ram,
        "capacity_bytes": r.value("storage_total"),
        "iops": r.value("iops_all_copies"),
        "explain": f"{d.servers} Exchange servers x {d.cores_per_server} cores (no CPU "
                   f"overcommit) and their RAM; every database copy's storage and IOPS "
                   f"(passive copies at {d.passive_io_pct:g} %)",
    }
    return r


def jetstress_view(loads: tuple[ServerLoad, ServerLoad]) -> SideBySide:
    """The ESRP table: one Jetstress server in normal operation and after the worst failure."""
    keys = ("normal", "worst") if loads[1].failed else ("normal",)
    rows = (("Mailboxes tested (active)", "active_per_server"),
            ("Jetstress target IOPS", "jetstress_iops"),
            ("Jetstress databases", "jetstress_databases"),
            ("Jetstress dataset", "jetstress_dataset"),
            ("Passive mailbox copies", "passive_per_server"),
            ("DB IOPS incl. passive copies", "db_iops_per_server"))
    return SideBySide(
        "Jetstress validation per server (ESRP)",
        tuple(load_name(loads[i].failed) for i in range(len(keys))),
        tuple((label, tuple(f"{stem}_{k}" for k in keys)) for label, stem in rows),
        f"{SRC_JETSTRESS}; {SRC_N1}")


def _notes(d: ExchangeDesign) -> list[str]:
    notes = [
        "IOPS per mailbox is the 2013 table (reused by 2016/2019); the 20 % headroom is the "
        "calculator's I/O overhead factor. Log, BDM and replication IO come on top.",
        f"Jetstress simulates a server's active mailboxes; its passive copies add their log "
        f"reads (DatabaseCopyCount) but not their database IO, which production adds at "
        f"{d.passive_io_pct:g} % of an active copy's (the DB IOPS incl. passive copies).",
        "Sizes are decimal (800MB = 800 x 10^6 bytes); memory is shown in GiB.",
    ]
    if d.specint_per_core is not None:
        notes.append("SPECint_rate2006 is retired: convert a SPECrate2017 figure first.")
    if d.version == "2019" and d.specint_per_core is not None:
        notes.append("Exchange 2019 megacycles: the 2016 figures (no separate 2019 table).")
    if d.copies == 1:
        notes.append("No HA copies: there is no DAG failover; the worst failure mode is the "
                     "design itself.")
    return notes

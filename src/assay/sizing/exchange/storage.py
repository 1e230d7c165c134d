"""Exchange capacity. Two figures are kept apart on purpose:

* the Jetstress dataset of a server: the mailboxes it tests x their quota (seed 003: 20,000 x
  800 MB = 16 TB), what a validation run creates;
* the production capacity: every copy, with whitespace, dumpster, growth, content index and
  logs (Understanding Mailbox Database and Log Capacity Factors), what must be bought.
"""

from __future__ import annotations

from assay.sizing.exchange.design import ExchangeDesign
from assay.sizing.exchange.layout import (
    ServerLoad,
    active_databases_per_server,
    database_copies_per_server,
    load_name,
)
from assay.sizing.exchange.profile import (
    LOGS_PER_MESSAGE,
    MAX_DB_STANDALONE,
    MAX_DB_WITH_COPIES,
    SRC_CAP,
    SRC_DB,
    SRC_JETSTRESS,
    SRC_LOG,
    log_factor,
    mailbox_size_on_disk,
)
from assay.sizing.explain import MIB, Bytes, Figure, Result, at_most, ceil_div


def database_count(d: ExchangeDesign, db_total: float) -> tuple[int, str]:
    """Databases in all (each with `copies` copies) and how the number was reached."""
    if d.databases is not None:
        return d.databases, "given"
    if d.databases_per_server is not None:
        return d.databases_per_server * d.servers, "databases_per_server x servers"
    limit = MAX_DB_WITH_COPIES if d.copies >= 2 else MAX_DB_STANDALONE
    # whole databases per server, so every server carries the same active load
    databases = max(ceil_div(db_total, limit), 1)
    return (ceil_div(databases, d.servers) * d.servers,
            "ceil(db_total / db_limit), rounded up to a multiple of servers")


def add_capacity(d: ExchangeDesign, r: Result, loads: tuple[ServerLoad, ServerLoad]) -> None:
    growth = 1 + d.growth_pct / 100
    t0 = d.tiers[0]
    db_total = sum(t.count * mailbox_size_on_disk(t, d.retention_days, d.single_item_recovery)
                   for t in d.tiers) * growth
    r.add("mailbox_on_disk", Figure(
        "Mailbox size on disk" + (" (tier 1)" if len(d.tiers) > 1 else ""),
        mailbox_size_on_disk(t0, d.retention_days, d.single_item_recovery), "bytes",
        "quota + msgs x msg_size (whitespace) + msgs x msg_size x retention_days "
        "+ quota x (1.2 % calendar + 3 % single item recovery)",
        {"quota": Bytes(t0.mailbox_size), "msgs": t0.messages_per_day,
         "msg_size": Bytes(t0.message_size), "retention_days": d.retention_days,
         "single_item_recovery": d.single_item_recovery}, SRC_CAP))
    r.add("db_total", Figure(
        "Database size, one copy of every mailbox (production)", db_total, "bytes",
        "sum over tiers of mailboxes x mailbox_on_disk x (1 + growth)",
        {"mailboxes": d.mailboxes, "growth": d.growth_pct / 100}, SRC_CAP))
    databases, how = database_count(d, db_total)
    limit = MAX_DB_WITH_COPIES if d.copies >= 2 else MAX_DB_STANDALONE
    r.add("databases", Figure("Databases in all (each with `copies` copies)", databases,
                              "databases", how,
                              {"db_total": Bytes(db_total), "db_limit": Bytes(limit),
                               "servers": d.servers}, SRC_DB))
    db_size = db_total / databases
    r.add("db_size", Figure("Database size (production)", db_size, "bytes",
                            "db_total / databases",
                            {"db_total": Bytes(db_total), "databases": databases}, SRC_DB))
    r.checks.append(at_most(
        "Database size best practice", db_size, limit, "bytes",
        f"Production database size ({'>= 2 copies' if d.copies >= 2 else 'no HA copies'})",
        SRC_DB))
    r.add("db_copies_per_server", Figure(
        "Database copies per server", database_copies_per_server(d, databases), "databases",
        "ceil(databases x copies / servers)", {"databases": databases, "copies": d.copies},
        SRC_DB))
    _jetstress(d, r, loads, databases)
    _production(d, r, db_total)


def _jetstress(d: ExchangeDesign, r: Result, loads: tuple[ServerLoad, ServerLoad],
               databases: int) -> None:
    for key, load in zip(("normal", "worst"), loads, strict=True):
        name = load_name(load.failed)
        mounted = active_databases_per_server(d, databases, load.failed)
        r.add(f"jetstress_databases_{key}", Figure(
            f"Jetstress databases per server, {name}", mounted, "databases",
            "ceil(databases / (servers - failed)): the databases one server mounts",
            {"databases": databases, "servers": d.servers, "failed": load.failed},
            SRC_JETSTRESS))
        r.add(f"jetstress_dataset_{key}", Figure(
            f"Jetstress dataset per server, {name}", load.quota_bytes, "bytes",
            "sum over tiers of active mailboxes x quota",
            {"active": load.active, "quota": Bytes(d.tiers[0].mailbox_size)}, SRC_JETSTRESS))
    normal = loads[0]
    r.add("jetstress_db_size", Figure(
        "Jetstress database size, normal operation",
        normal.quota_bytes / active_databases_per_server(d, databases, 0), "bytes",
        "jetstress_dataset_normal / jetstress_databases_normal",
        {"jetstress_dataset_normal": Bytes(normal.quota_bytes)}, SRC_JETSTRESS))


def _production(d: ExchangeDesign, r: Result, db_total: float) -> None:
    t0 = d.tiers[0]
    content_index = db_total * d.content_index_pct / 100
    r.add("content_index", Figure(
        "Content index, one copy", content_index, "bytes", "db_total x content_index_pct",
        {"content_index_pct": d.content_index_pct}, SRC_CAP + " [R: 10-20 %, version dependent]"))
    logs = sum(t.count * LOGS_PER_MESSAGE * t.messages_per_day * log_factor(t.message_size)
               for t in d.tiers) * MIB  # ESE log files are 1 MiB each
    r.add("logs_per_day", Figure(
        "Transaction logs per day, one copy", logs, "bytes",
        "sum over tiers of mailboxes x 0.2 x messages_per_day x log_factor(msg_size) x 1 MiB",
        {"log_factor": log_factor(t0.message_size)}, SRC_LOG))
    log_space = logs * d.log_days
    r.add("log_space", Figure(
        "Log space, one copy", log_space, "bytes", "logs_per_day x log_days",
        {"log_days": d.log_days}, SRC_DB))
    per_copy = db_total + content_index + log_space
    r.add("storage_per_copy", Figure(
        "Storage, one copy (production)", per_copy, "bytes",
        "db_total + content_index + log_space",
        {"db_total": Bytes(db_total), "content_index": Bytes(content_index),
         "log_space": Bytes(log_space)}, SRC_CAP))
    r.add("storage_total", Figure(
        "Storage, all copies (production)", per_copy * d.copies, "bytes",
        "storage_per_copy x copies", {"copies": d.copies}, SRC_CAP))
    r.add("storage_per_server", Figure(
        "Storage per server (production)", per_copy * d.copies / d.servers, "bytes",
        "storage_total / servers", {"servers": d.servers}, SRC_CAP))
    r.add("db_files_per_server", Figure(
        "Database files per server, all its copies (production)",
        db_total * d.copies / d.servers, "bytes", "db_total x copies / servers",
        {"servers": d.servers}, SRC_CAP))

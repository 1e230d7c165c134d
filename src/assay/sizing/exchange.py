"""Exchange 2013/2016/2019 mailbox role sizing, after the Server Role Requirements Calculator.

Rules and constants: `sizing-rules.md` §2 (the reference notes shipped with the design) and
docs/sizing.md. The worst failure mode is the DAG losing `failures` servers: the survivors carry
the same number of database copies each, but more of them are active (§2.7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assay.exitcodes import UserError
from assay.sizing.explain import (
    GIB,
    KIB,
    MIB,
    TIB,
    Bytes,
    Figure,
    Result,
    at_least,
    at_most,
    ceil_div,
    round_half_up,
)

SRC_IOPS = "Ask the Perf Guy: Sizing Exchange 2013 Deployments (sizing-rules §2.2)"
SRC_MC = "SizingChecker.ps1 / Ask the Perf Guy 2016 (sizing-rules §2.2)"
SRC_CPU = "mcsmlab Exchange 2013 processor sizing; SizingChecker constants (sizing-rules §2.3)"
SRC_80 = "Microsoft: worst failure mode CPU <= 80 % (sizing-rules §2.3; seed 000)"
SRC_RAM = "samdrey: store gives ~25 % of RAM to the ESE cache (sizing-rules §2.4)"
SRC_CAP = "Understanding Mailbox Database and Log Capacity Factors (sizing-rules §2.5)"
SRC_DB = "Exchange Server storage configuration options (sizing-rules §2.5)"
SRC_LOG = "Capacity Planning - Transaction Log Space is Critical (sizing-rules §2.2)"
SRC_LIMITS = "Exchange Server system requirements; 2016 scalability update (sizing-rules §2.3)"

IOPS_PER_MESSAGE = 0.00067  # DB IOPS per mailbox per message/day, active or passive copy
IO_HEADROOM = 0.20  # the calculator's 20 % I/O overhead factor
CACHE_MIB_PER_MESSAGE = 0.06  # ESE cache per mailbox per message/day
CACHE_SHARE_OF_RAM = 0.25  # Exchange 2013+ gives ~25 % of RAM to the database cache
LOGS_PER_MESSAGE = 0.2  # 150 msgs/day at 75 KB -> 30 x 1 MB logs per mailbox per day
BASE_MESSAGE_SIZE = 75 * KIB
LOG_GROWTH_PER_DOUBLING = 0.9  # doubling the message size multiplies log volume by 1.9
CALENDAR_VERSIONING = 0.012  # share of quota kept for calendar version logging
SINGLE_ITEM_RECOVERY = 0.03  # ~3-6 % of quota with single item recovery [R]
BASELINE_MC_PER_CORE = 2000 / 33.75  # megacycles per SPECint_rate2006 unit per core

# Megacycles per mailbox per message/day: (active, passive). 2013 is the multi-role figure
# (mailbox-only 0.0425 x 1.375, SP1 CAS:Mailbox 3:8); 2019 has no published table and the
# calculator reuses the 2016 figures.
MC_SLOPES = {"2013": (0.0425 * 1.375, 0.0137), "2016": (0.0597, 0.014), "2019": (0.0597, 0.014)}
MAX_CORES = {"2013": 24, "2016": 24, "2019": 48}
MAX_RAM = {"2013": 96 * GIB, "2016": 192 * GIB, "2019": 256 * GIB}
MIN_RAM_2019 = 128 * GIB  # mailbox role, recommended minimum
RAM_SIZES_GIB = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
MAX_DB_WITH_COPIES = 2 * TIB  # best practice with two or more HA copies
MAX_DB_STANDALONE = 200 * GIB  # best practice without HA copies


@dataclass(frozen=True)
class MailboxTier:
    count: int
    messages_per_day: int
    mailbox_size: int  # quota, bytes
    message_size: int = BASE_MESSAGE_SIZE  # average message, bytes


@dataclass(frozen=True)
class ExchangeDesign:
    tiers: tuple[MailboxTier, ...]
    servers: int
    specint_per_core: float  # SPECint_rate2006 of the server / its cores
    cores_per_server: int = 24
    copies: int = 2
    version: str = "2019"
    failures: int | None = None  # servers lost in the worst failure mode (default copies - 1)
    databases: int | None = None  # per copy; default from the database size rule
    headroom: bool = True
    log_days: float = 3.0
    retention_days: float = 14.0
    growth_pct: float = 20.0
    content_index_pct: float = 10.0
    single_item_recovery: bool = True
    hypervisor_overhead_pct: float = 0.0
    ram_per_server: int | None = None  # bytes, if the user has chosen it
    max_cpu_pct: float = 80.0

    @property
    def mailboxes(self) -> int:
        return sum(t.count for t in self.tiers)

    @property
    def worst_failures(self) -> int:
        return self.copies - 1 if self.failures is None else self.failures


def validate(d: ExchangeDesign) -> None:
    """Refuse designs the rules cannot describe, with a message that names the option."""
    if not d.tiers:
        raise UserError("give at least one mailbox tier (--mailboxes or --tier)")
    if len(d.tiers) > 4:
        raise UserError(f"the calculator has at most 4 mailbox tiers, got {len(d.tiers)}")
    for i, t in enumerate(d.tiers, 1):
        where = f"tier {i}: " if len(d.tiers) > 1 else ""
        if t.count <= 0:
            raise UserError(f"{where}mailboxes must be a positive number, got {t.count}")
        if not 1 <= t.messages_per_day <= 1000:
            raise UserError(f"{where}messages per day must be 1-1000, got {t.messages_per_day}")
        if t.mailbox_size <= 0 or t.message_size <= 0:
            raise UserError(f"{where}mailbox and message sizes must be positive")
    if d.version not in MC_SLOPES:
        raise UserError(f"--version must be 2013, 2016 or 2019, got {d.version}")
    if d.servers < 1:
        raise UserError(f"--servers must be at least 1, got {d.servers}")
    if d.copies < 1:
        raise UserError(f"--copies must be at least 1, got {d.copies}")
    if d.copies > d.servers:
        raise UserError(f"{d.copies} database copies need at least {d.copies} servers "
                        f"(each copy on its own server), got {d.servers}")
    if d.cores_per_server < 1 or d.specint_per_core <= 0:
        raise UserError("--cores and --specint-per-core must be positive")
    f = d.worst_failures
    if f < 0:
        raise UserError(f"--failures cannot be negative, got {f}")
    if f > d.copies - 1:
        raise UserError(f"--failures {f} loses every copy of some databases: with {d.copies} "
                        f"copies a DAG survives at most {d.copies - 1} server failures")
    if d.databases is not None and d.databases < 1:
        raise UserError(f"--databases must be at least 1, got {d.databases}")
    if not 0 <= d.hypervisor_overhead_pct < 100:
        raise UserError("--hypervisor-overhead is a percentage between 0 and 99")
    for name, v in (("--log-days", d.log_days), ("--retention-days", d.retention_days),
                    ("--growth", d.growth_pct), ("--content-index", d.content_index_pct)):
        if v < 0:
            raise UserError(f"{name} cannot be negative, got {v}")


def iops_per_mailbox(messages_per_day: int, headroom: bool = True) -> float:
    """Jetstress' MailboxIops: 0.00067 x messages/day (x 1.2), to 3 decimals as Jetstress takes it.

    150 messages/day -> 0.101, or 0.121 with the 20 % headroom (seed 003: 60,000 x 0.121 = 7,260).
    """
    factor = 1 + IO_HEADROOM if headroom else 1.0
    return round_half_up(IOPS_PER_MESSAGE * messages_per_day * factor, 3)


def megacycles_per_mailbox(messages_per_day: int, version: str) -> tuple[float, float]:
    """(active, passive) megacycles, rounded to 2 decimals as the published tables are."""
    active, passive = MC_SLOPES[version]
    return (round_half_up(active * messages_per_day, 2),
            round_half_up(passive * messages_per_day, 2))


def megacycles_per_core(specint_per_core: float) -> float:
    """Exchange megacycles one core delivers, against the 2000 MHz / 33.75 baseline."""
    return specint_per_core * BASELINE_MC_PER_CORE


def cache_per_mailbox(messages_per_day: int) -> float:
    """ESE database cache per active mailbox, MiB (150 msgs -> 9 MiB)."""
    return CACHE_MIB_PER_MESSAGE * messages_per_day


def log_factor(message_size: int) -> float:
    """Log volume relative to 75 KB messages: 1.9x per doubling, interpolated linearly."""
    return max(0.1, 1 + LOG_GROWTH_PER_DOUBLING * (message_size / BASE_MESSAGE_SIZE - 1))


def mailbox_size_on_disk(t: MailboxTier, retention_days: float, sir: bool) -> float:
    """quota + whitespace (one day of mail) + dumpster (retained mail, calendar versions, SIR)."""
    daily = t.messages_per_day * t.message_size
    dumpster = daily * retention_days + t.mailbox_size * CALENDAR_VERSIONING
    if sir:
        dumpster += t.mailbox_size * SINGLE_ITEM_RECOVERY
    return t.mailbox_size + daily + dumpster


def next_ram_size(required: float) -> int:
    """The next common server memory size at or above `required` bytes."""
    for g in RAM_SIZES_GIB:
        if g * GIB >= required:
            return g * GIB
    return math.ceil(required / (256 * GIB)) * 256 * GIB


def size(d: ExchangeDesign) -> Result:
    validate(d)
    r = Result("exchange", inputs=_inputs(d))
    _iops(d, r)
    _cpu(d, r)
    _memory(d, r)
    _capacity(d, r)
    r.notes.extend(_notes(d))
    fig = r.figures
    ram = d.ram_per_server if d.ram_per_server else fig["ram_recommended"].value
    r.demand = {
        "kind": "exchange",
        "cores": d.servers * d.cores_per_server,
        "ram_bytes": d.servers * ram,
        "capacity_bytes": fig["storage_total"].value,
        "iops": fig["iops_all_copies"].value,
        "explain": f"{d.servers} Exchange servers x {d.cores_per_server} cores (no CPU "
                   f"overcommit) and their RAM; every database copy's storage and IOPS",
    }
    return r


def _inputs(d: ExchangeDesign) -> dict[str, object]:
    return {
        "tiers": [{"mailboxes": t.count, "messages_per_day": t.messages_per_day,
                   "mailbox_size": t.mailbox_size, "message_size": t.message_size}
                  for t in d.tiers],
        "servers": d.servers, "copies": d.copies, "cores_per_server": d.cores_per_server,
        "specint_per_core": d.specint_per_core, "version": d.version,
        "failures": d.worst_failures, "databases": d.databases, "headroom": d.headroom,
        "log_days": d.log_days, "retention_days": d.retention_days,
        "growth_pct": d.growth_pct, "content_index_pct": d.content_index_pct,
        "single_item_recovery": d.single_item_recovery,
        "hypervisor_overhead_pct": d.hypervisor_overhead_pct,
        "ram_per_server": d.ram_per_server, "max_cpu_pct": d.max_cpu_pct,
    }


def copies_per_server(d: ExchangeDesign, t: MailboxTier) -> int:
    """Mailbox copies one server hosts; unchanged by a failure (the lost server's copies are
    gone, the survivors keep theirs)."""
    return ceil_div(t.count * d.copies, d.servers)


def active_per_server(d: ExchangeDesign, t: MailboxTier, failed: int) -> int:
    """Active mailboxes per server with `failed` servers down: survivors share all actives."""
    return ceil_div(t.count, d.servers - failed)


def _iops(d: ExchangeDesign, r: Result) -> None:
    total = 0.0
    per_server = 0.0
    base_total = 0.0
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
        per_server += copies_per_server(d, t) * per_mbx
    r.add("iops_total", Figure(
        "DB IOPS, all mailboxes (one copy)", total, "IOPS",
        "sum over tiers of mailboxes x iops_per_mailbox",
        {"mailboxes": d.mailboxes, "without_headroom": round(base_total, 1)}, SRC_IOPS))
    r.add("iops_all_copies", Figure(
        "DB IOPS, all database copies", total * d.copies, "IOPS",
        "iops_total x copies (a passive copy does the same IO as an active one)",
        {"iops_total": total, "copies": d.copies}, SRC_IOPS))
    r.add("iops_per_server", Figure(
        "DB IOPS per server (normal and worst failure)", per_server, "IOPS",
        "sum over tiers of ceil(mailboxes x copies / servers) x iops_per_mailbox",
        {"copies": d.copies, "servers": d.servers}, SRC_IOPS))


def _cpu(d: ExchangeDesign, r: Result) -> None:
    failed = d.worst_failures
    normal = worst = 0.0
    active_worst = passive_worst = 0
    for t in d.tiers:
        mc_a, mc_p = megacycles_per_mailbox(t.messages_per_day, d.version)
        hosted = copies_per_server(d, t)
        a0 = active_per_server(d, t, 0)
        a1 = active_per_server(d, t, failed)
        normal += a0 * mc_a + (hosted - a0) * mc_p
        worst += a1 * mc_a + (hosted - a1) * mc_p
        active_worst += a1
        passive_worst += hosted - a1
    t0 = d.tiers[0]
    mc_a0, mc_p0 = megacycles_per_mailbox(t0.messages_per_day, d.version)
    r.add("mc_per_mailbox_active", Figure(
        "Megacycles per active mailbox" + (" (tier 1)" if len(d.tiers) > 1 else ""), mc_a0,
        "Mcycles", f"round({MC_SLOPES[d.version][0]:.6g} x messages_per_day, 2)",
        {"messages_per_day": t0.messages_per_day, "version": d.version}, SRC_MC))
    r.add("mc_per_mailbox_passive", Figure(
        "Megacycles per passive mailbox" + (" (tier 1)" if len(d.tiers) > 1 else ""), mc_p0,
        "Mcycles", f"round({MC_SLOPES[d.version][1]:.6g} x messages_per_day, 2)",
        {"messages_per_day": t0.messages_per_day, "version": d.version}, SRC_MC))
    r.add("active_per_server_worst", Figure(
        "Active mailboxes per server, worst failure", active_worst, "mailboxes",
        "ceil(mailboxes / (servers - failures))",
        {"mailboxes": d.mailboxes, "servers": d.servers, "failures": failed}, SRC_MC))
    r.add("passive_per_server_worst", Figure(
        "Passive mailboxes per server, worst failure", passive_worst, "mailboxes",
        "ceil(mailboxes x copies / servers) - active_per_server_worst",
        {"copies": d.copies, "servers": d.servers}, SRC_MC))
    per_core = megacycles_per_core(d.specint_per_core)
    available = per_core * d.cores_per_server * (1 - d.hypervisor_overhead_pct / 100)
    r.add("mc_per_core", Figure(
        "Megacycles per core", per_core, "Mcycles",
        "specint_per_core x 2000 / 33.75", {"specint_per_core": d.specint_per_core}, SRC_CPU))
    r.add("mc_available", Figure(
        "Megacycles available per server", available, "Mcycles",
        "mc_per_core x cores x (1 - hypervisor_overhead)",
        {"cores": d.cores_per_server, "hypervisor_overhead": d.hypervisor_overhead_pct / 100},
        SRC_CPU))
    r.add("mc_required_normal", Figure(
        "Megacycles required per server, normal", normal, "Mcycles",
        "active x mc_active + passive x mc_passive, all servers up",
        {"servers": d.servers}, SRC_MC))
    r.add("mc_required_worst", Figure(
        f"Megacycles required per server, {failed} server(s) down", worst, "Mcycles",
        "active_worst x mc_active + passive_worst x mc_passive",
        {"active_worst": active_worst, "passive_worst": passive_worst}, SRC_MC))
    util_normal = 100 * normal / available
    util_worst = 100 * worst / available
    r.add("cpu_normal", Figure(
        "CPU utilisation, normal", util_normal, "%", "mc_required_normal / mc_available",
        {"mc_required_normal": normal, "mc_available": available}, SRC_CPU))
    r.add("cpu_worst", Figure(
        "CPU utilisation, worst failure", util_worst, "%", "mc_required_worst / mc_available",
        {"mc_required_worst": worst, "mc_available": available}, SRC_80))
    r.checks.append(at_most(
        "CPU in the worst failure mode", util_worst, d.max_cpu_pct, "%",
        f"CPU with {failed} server(s) down", SRC_80))
    r.checks.append(at_most(
        f"Exchange {d.version} cores per server", d.cores_per_server, MAX_CORES[d.version],
        "cores", "Cores per server", SRC_LIMITS))


def _memory(d: ExchangeDesign, r: Result) -> None:
    failed = d.worst_failures
    cache = sum(active_per_server(d, t, failed) * cache_per_mailbox(t.messages_per_day)
                for t in d.tiers) * MIB
    r.add("db_cache", Figure(
        "DB cache needed per server, worst failure", cache, "bytes",
        "active_per_server_worst x 0.06 MiB x messages_per_day",
        {"active_worst": r.figures["active_per_server_worst"].value,
         "cache_per_mailbox_mib": cache_per_mailbox(d.tiers[0].messages_per_day)}, SRC_RAM))
    required = cache / CACHE_SHARE_OF_RAM
    r.add("ram_required", Figure(
        "RAM required per server", required, "bytes", "db_cache / 0.25",
        {"db_cache": Bytes(cache)}, SRC_RAM))
    recommended = next_ram_size(required)
    if d.version == "2019":
        recommended = max(recommended, MIN_RAM_2019)
    r.add("ram_recommended", Figure(
        "RAM recommended per server", recommended, "bytes",
        "next common memory size >= ram_required" +
        (" (at least 128 GiB for 2019)" if d.version == "2019" else ""),
        {"ram_required": Bytes(required)}, SRC_LIMITS))
    r.checks.append(at_most(
        f"Exchange {d.version} memory per server", recommended, MAX_RAM[d.version], "bytes",
        "RAM needed per server (add servers if over)", SRC_LIMITS))
    if d.ram_per_server is not None:
        r.checks.append(at_least(
            "RAM given covers the DB cache", d.ram_per_server, required, "bytes",
            "RAM per server", SRC_RAM))
        r.checks.append(at_most(
            f"Exchange {d.version} memory per server (given)", d.ram_per_server,
            MAX_RAM[d.version], "bytes", "RAM per server", SRC_LIMITS))


def _capacity(d: ExchangeDesign, r: Result) -> None:
    growth = 1 + d.growth_pct / 100
    db_total = 0.0
    logs_day = 0.0
    t0 = d.tiers[0]
    for t in d.tiers:
        db_total += t.count * mailbox_size_on_disk(t, d.retention_days,
                                                   d.single_item_recovery) * growth
        logs_day += t.count * LOGS_PER_MESSAGE * t.messages_per_day * log_factor(t.message_size)
    r.add("mailbox_on_disk", Figure(
        "Mailbox size on disk" + (" (tier 1)" if len(d.tiers) > 1 else ""),
        mailbox_size_on_disk(t0, d.retention_days, d.single_item_recovery), "bytes",
        "quota + msgs x msg_size (whitespace) + msgs x msg_size x retention_days "
        "+ quota x (1.2 % calendar + 3 % single item recovery)",
        {"quota": Bytes(t0.mailbox_size), "msgs": t0.messages_per_day,
         "msg_size": Bytes(t0.message_size),
         "retention_days": d.retention_days, "single_item_recovery": d.single_item_recovery},
        SRC_CAP))
    r.add("db_total", Figure(
        "Database size, one copy of every mailbox", db_total, "bytes",
        "sum over tiers of mailboxes x mailbox_on_disk x (1 + growth)",
        {"mailboxes": d.mailboxes, "growth": d.growth_pct / 100}, SRC_CAP))
    limit = MAX_DB_WITH_COPIES if d.copies >= 2 else MAX_DB_STANDALONE
    if d.databases is not None:
        databases = d.databases
        how = "given"
    else:
        # whole databases per server, so every server carries the same active load
        databases = max(ceil_div(db_total, limit), 1)
        databases = ceil_div(databases, d.servers) * d.servers
        how = "ceil(db_total / db_limit), rounded up to a multiple of servers"
    db_size = db_total / databases
    r.add("databases", Figure("Databases (each with `copies` copies)", databases, "databases",
                              how, {"db_total": Bytes(db_total), "db_limit": Bytes(limit),
                                    "servers": d.servers}, SRC_DB))
    r.add("db_size", Figure("Database size", db_size, "bytes", "db_total / databases",
                            {"db_total": Bytes(db_total), "databases": databases}, SRC_DB))
    r.checks.append(at_most(
        "Database size best practice", db_size, limit, "bytes",
        f"Database size ({'>= 2 copies' if d.copies >= 2 else 'no HA copies'})", SRC_DB))
    content_index = db_total * d.content_index_pct / 100
    r.add("content_index", Figure(
        "Content index, one copy", content_index, "bytes", "db_total x content_index_pct",
        {"content_index_pct": d.content_index_pct}, SRC_CAP + " [R: 10-20 %, version dependent]"))
    log_daily = logs_day * MIB
    r.add("logs_per_day", Figure(
        "Transaction logs per day, one copy", log_daily, "bytes",
        "sum over tiers of mailboxes x 0.2 x messages_per_day x log_factor(msg_size) x 1 MiB",
        {"log_factor": log_factor(t0.message_size)}, SRC_LOG))
    log_space = log_daily * d.log_days
    r.add("log_space", Figure(
        "Log space, one copy", log_space, "bytes", "logs_per_day x log_days",
        {"log_days": d.log_days}, SRC_DB))
    per_copy = db_total + content_index + log_space
    r.add("storage_per_copy", Figure(
        "Storage, one copy", per_copy, "bytes", "db_total + content_index + log_space",
        {"db_total": Bytes(db_total), "content_index": Bytes(content_index),
         "log_space": Bytes(log_space)}, SRC_CAP))
    r.add("storage_total", Figure(
        "Storage, all copies", per_copy * d.copies, "bytes", "storage_per_copy x copies",
        {"copies": d.copies}, SRC_CAP))
    r.add("storage_per_server", Figure(
        "Storage per server", per_copy * d.copies / d.servers, "bytes",
        "storage_total / servers", {"servers": d.servers}, SRC_CAP))
    r.add("db_files_per_server", Figure(
        "Database files per server (the Jetstress dataset)", db_total * d.copies / d.servers,
        "bytes", "db_total x copies / servers", {"servers": d.servers}, SRC_CAP))
    r.add("db_copies_per_server", Figure(
        "Database copies per server", ceil_div(databases * d.copies, d.servers), "databases",
        "ceil(databases x copies / servers)", {"databases": databases, "copies": d.copies},
        SRC_DB))


def _notes(d: ExchangeDesign) -> list[str]:
    notes = [
        "IOPS per mailbox is the 2013 table (reused by 2016/2019); the 20 % headroom is the "
        "calculator's I/O overhead factor. Log, BDM and replication IO come on top.",
        "SPECint_rate2006 is retired: convert a SPECrate2017 figure before using it here.",
    ]
    if d.version == "2019":
        notes.append("Exchange 2019 megacycles: the 2016 figures (no separate 2019 table).")
    if d.copies == 1:
        notes.append("No HA copies: there is no DAG failover; the worst failure mode is the "
                     "design itself.")
    return notes

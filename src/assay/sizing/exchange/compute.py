"""Exchange CPU (megacycles, worst failure mode <= 80 %) and memory (the ESE cache)."""

from __future__ import annotations

from assay.sizing.exchange.design import ExchangeDesign
from assay.sizing.exchange.layout import active_per_server, copies_per_server
from assay.sizing.exchange.profile import (
    CACHE_SHARE_OF_RAM,
    MAX_CORES,
    MAX_RAM,
    MC_SLOPES,
    MIN_RAM_2019,
    SRC_80,
    SRC_CPU,
    SRC_LIMITS,
    SRC_MC,
    SRC_RAM,
    cache_per_mailbox,
    megacycles_per_core,
    megacycles_per_mailbox,
    next_ram_size,
)
from assay.sizing.explain import MIB, BinBytes, Figure, Result, at_least, at_most


def megacycles_required(d: ExchangeDesign, failed: int) -> float:
    """active x mc_active + passive x mc_passive on one server with `failed` servers down."""
    total = 0.0
    for t in d.tiers:
        mc_a, mc_p = megacycles_per_mailbox(t.messages_per_day, d.version)
        active = active_per_server(d, t, failed)
        total += active * mc_a + (copies_per_server(d, t) - active) * mc_p
    return total


def add_cpu(d: ExchangeDesign, r: Result) -> None:
    r.checks.append(at_most(
        f"Exchange {d.version} cores per server", d.cores_per_server, MAX_CORES[d.version],
        "cores", "Cores per server", SRC_LIMITS))
    if d.specint_per_core is None:
        r.notes.append("CPU not sized: give --specint-per-core (SPECint_rate2006 of the server "
                       "/ its cores) to check the 80 % worst-failure-mode rule.")
        return
    failed = d.worst_failures
    normal, worst = megacycles_required(d, 0), megacycles_required(d, failed)
    t0 = d.tiers[0]
    mc_a0, mc_p0 = megacycles_per_mailbox(t0.messages_per_day, d.version)
    tier = " (tier 1)" if len(d.tiers) > 1 else ""
    for key, label, value, slope in (("active", "active", mc_a0, 0), ("passive", "passive",
                                                                      mc_p0, 1)):
        r.add(f"mc_per_mailbox_{key}", Figure(
            f"Megacycles per {label} mailbox{tier}", value, "Mcycles",
            f"round({MC_SLOPES[d.version][slope]:.6g} x messages_per_day, 2)",
            {"messages_per_day": t0.messages_per_day, "version": d.version}, SRC_MC))
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
        {"active_worst": r.value("active_per_server_worst"),
         "passive_worst": r.value("passive_per_server_worst")}, SRC_MC))
    r.add("cpu_normal", Figure(
        "CPU utilisation, normal", 100 * normal / available, "%",
        "mc_required_normal / mc_available",
        {"mc_required_normal": normal, "mc_available": available}, SRC_CPU))
    util_worst = 100 * worst / available
    r.add("cpu_worst", Figure(
        "CPU utilisation, worst failure", util_worst, "%", "mc_required_worst / mc_available",
        {"mc_required_worst": worst, "mc_available": available}, SRC_80))
    r.checks.insert(0, at_most(
        "CPU in the worst failure mode", util_worst, d.max_cpu_pct, "%",
        f"CPU with {failed} server(s) down", SRC_80))


def add_memory(d: ExchangeDesign, r: Result) -> None:
    failed = d.worst_failures
    cache = sum(active_per_server(d, t, failed) * cache_per_mailbox(t.messages_per_day)
                for t in d.tiers) * MIB
    r.add("db_cache", Figure(
        "DB cache needed per server, worst failure", cache, "bytes",
        "active_per_server_worst x 0.06 MiB x messages_per_day",
        {"active_worst": r.value("active_per_server_worst"),
         "cache_per_mailbox_mib": cache_per_mailbox(d.tiers[0].messages_per_day)}, SRC_RAM,
        binary=True))
    required = cache / CACHE_SHARE_OF_RAM
    r.add("ram_required", Figure(
        "RAM required per server", required, "bytes", "db_cache / 0.25",
        {"db_cache": BinBytes(cache)}, SRC_RAM, binary=True))
    recommended = next_ram_size(required)
    if d.version == "2019":
        recommended = max(recommended, MIN_RAM_2019)
    r.add("ram_recommended", Figure(
        "RAM recommended per server", recommended, "bytes",
        "next common memory size >= ram_required" +
        (" (at least 128 GiB for 2019)" if d.version == "2019" else ""),
        {"ram_required": BinBytes(required)}, SRC_LIMITS, binary=True))
    r.checks.append(at_most(
        f"Exchange {d.version} memory per server", recommended, MAX_RAM[d.version], "bytes",
        "RAM needed per server (add servers if over)", SRC_LIMITS, binary=True))
    if d.ram_per_server is not None:
        r.checks.append(at_least(
            "RAM given covers the DB cache", d.ram_per_server, required, "bytes",
            "RAM per server", SRC_RAM, binary=True))
        r.checks.append(at_most(
            f"Exchange {d.version} memory per server (given)", d.ram_per_server,
            MAX_RAM[d.version], "bytes", "RAM per server", SRC_LIMITS, binary=True))

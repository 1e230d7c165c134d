"""OLTP (SQL Server style) database sizing: IOPS, throughput, capacity, CPU and RAM demand.

Two ways in (reference `sizing-rules.md` §3): an IO profile per database server (the X-Ray
presets, or your own data/log IOPS), or transactions per second with per-transaction IO that
you calibrated on a HammerDB run (§3.2: literature constants are not safe to hard-code).
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.exitcodes import UserError
from assay.sizing.explain import GIB, KIB, Figure, Result, at_least, ceil_div

SRC_XRAY = "Nutanix X-Ray OLTP fio files (xray-and-hcibench §1.6)"
SRC_SQLIO = "SQL Server's I/O Characteristics (sizing-rules §3.1)"
SRC_TXN = "sizing-rules §3.2: data IOPS = TPS x reads x (1 - hit) + checkpoint writes"

# Data IO: 90 % 8 KiB, 10 % 32 KiB (X-Ray bssplit) -> mean 10.4 KiB; log IO: 32 KiB appends.
DATA_IO_BYTES = 0.9 * 8 * KIB + 0.1 * 32 * KIB
LOG_IO_BYTES = 32 * KIB


@dataclass(frozen=True)
class OltpProfile:
    data_iops: float
    log_iops: float
    read_pct: float
    data_files: int
    log_files: int
    dataset: int  # bytes per database server


# X-Ray: standard 4 x 500+500 data + 2 x 100 log over 4 x 28 GiB + 2 x 2 GiB;
# high 4 x 750+750 + 2 x 200; medium 4 x 750+750 + 2 x 150 over 4 x 140 GiB + 2 x 4 GiB.
PRESETS = {
    "standard": OltpProfile(4000, 200, 50, 4, 2, 4 * 28 * GIB + 2 * 2 * GIB),
    "medium": OltpProfile(6000, 300, 50, 4, 2, 4 * 140 * GIB + 2 * 4 * GIB),
    "high": OltpProfile(6000, 400, 50, 4, 2, 4 * 28 * GIB + 2 * 2 * GIB),
}


@dataclass(frozen=True)
class Transactions:
    """Per-transaction IO measured on your own database (HammerDB, production counters)."""

    tps: float
    reads_per_txn: float
    writes_per_txn: float
    log_bytes_per_txn: int
    hit_ratio: float = 0.0  # buffer cache hit ratio; 0 = every read reaches storage


@dataclass(frozen=True)
class OltpDesign:
    profile: OltpProfile
    preset: str | None = None
    transactions: Transactions | None = None
    instances: int = 1
    vcpus: int = 4  # per database server (X-Ray OLTP VM: 4 vCPU / 4 GB)
    ram: int = 4 * GIB  # per database server
    growth_pct: float = 0.0
    nodes: int | None = None
    failures: int = 1


def profile_from_transactions(t: Transactions, dataset: int, data_files: int = 4,
                              log_files: int = 2) -> OltpProfile:
    """Turn measured per-transaction IO into an IO profile (one log flush per commit)."""
    reads = t.tps * t.reads_per_txn * (1 - t.hit_ratio)
    writes = t.tps * t.writes_per_txn
    data = reads + writes
    read_pct = 100 * reads / data if data else 0.0
    # log IOPS: one flush per commit at most; group commit makes it fewer, never more
    log_iops = max(t.tps, t.tps * t.log_bytes_per_txn / LOG_IO_BYTES) if t.tps else 0.0
    return OltpProfile(data, log_iops, read_pct, data_files, log_files, dataset)


def validate(d: OltpDesign) -> None:
    p = d.profile
    if d.instances < 1:
        raise UserError(f"--instances must be at least 1, got {d.instances}")
    if p.data_iops < 0 or p.log_iops < 0 or p.data_iops + p.log_iops == 0:
        raise UserError("data and log IOPS must be non-negative and not both zero")
    if not 0 <= p.read_pct <= 100:
        raise UserError(f"--read-pct must be 0-100, got {p.read_pct}")
    if p.data_files < 1 or p.log_files < 1:
        raise UserError("--data-files and --log-files must be at least 1")
    if p.dataset <= 0:
        raise UserError("--dataset must be positive")
    if d.vcpus < 1 or d.ram <= 0:
        raise UserError("--vcpus and --ram must be positive")
    if d.growth_pct < 0:
        raise UserError(f"--growth cannot be negative, got {d.growth_pct}")
    t = d.transactions
    if t is not None:
        if t.tps <= 0 or t.reads_per_txn < 0 or t.writes_per_txn < 0:
            raise UserError("--tps must be positive, reads/writes per transaction non-negative")
        if not 0 <= t.hit_ratio < 1:
            raise UserError(f"--hit-ratio must be in [0, 1), got {t.hit_ratio}")
    _validate_nodes(d.nodes, d.failures)


def _validate_nodes(nodes: int | None, failures: int) -> None:
    if failures < 0:
        raise UserError(f"--failures cannot be negative, got {failures}")
    if nodes is not None and nodes <= failures:
        raise UserError(f"--nodes {nodes} leaves no node after {failures} failure(s)")


def per_node_after_failure(count: int, nodes: int, failures: int) -> int:
    """Instances one surviving node carries once `failures` nodes are down."""
    return ceil_div(count, nodes - failures)


def size(d: OltpDesign) -> Result:
    validate(d)
    p = d.profile
    r = Result("oltp", inputs={
        "preset": d.preset, "data_iops": p.data_iops, "log_iops": p.log_iops,
        "read_pct": p.read_pct, "data_files": p.data_files, "log_files": p.log_files,
        "dataset": p.dataset, "instances": d.instances, "vcpus": d.vcpus, "ram": d.ram,
        "growth_pct": d.growth_pct, "nodes": d.nodes, "failures": d.failures,
        "transactions": None if d.transactions is None else vars(d.transactions),
    })
    src = SRC_XRAY if d.preset else (SRC_TXN if d.transactions else "your profile")
    if d.transactions is not None:
        t = d.transactions
        r.add("data_iops", Figure(
            "Data IOPS per server", p.data_iops, "IOPS",
            "tps x reads_per_txn x (1 - hit_ratio) + tps x writes_per_txn",
            {"tps": t.tps, "reads_per_txn": t.reads_per_txn, "hit_ratio": t.hit_ratio,
             "writes_per_txn": t.writes_per_txn}, SRC_TXN))
        r.add("log_iops", Figure(
            "Log IOPS per server", p.log_iops, "IOPS",
            "max(tps, tps x log_bytes_per_txn / 32 KiB): one flush per commit at most",
            {"tps": t.tps, "log_bytes_per_txn": t.log_bytes_per_txn}, SRC_SQLIO))
    else:
        r.add("data_iops", Figure("Data IOPS per server", p.data_iops, "IOPS",
                                  "profile data IOPS", {"preset": d.preset or "custom"}, src))
        r.add("log_iops", Figure("Log IOPS per server", p.log_iops, "IOPS",
                                 "profile log IOPS", {"preset": d.preset or "custom"}, src))
    per_server = p.data_iops + p.log_iops
    r.add("iops_per_server", Figure("IOPS per server", per_server, "IOPS",
                                    "data_iops + log_iops",
                                    {"data_iops": p.data_iops, "log_iops": p.log_iops}, src))
    r.add("read_iops", Figure("Data reads per server", p.data_iops * p.read_pct / 100, "IOPS",
                              "data_iops x read_pct", {"read_pct": p.read_pct}, src))
    mbps = (p.data_iops * DATA_IO_BYTES + p.log_iops * LOG_IO_BYTES) / 1e6
    r.add("mbps_per_server", Figure(
        "Throughput per server", mbps, "MB/s",
        "(data_iops x 10.4 KiB + log_iops x 32 KiB) / 1e6",
        {"data_io": "90 % 8 KiB + 10 % 32 KiB", "log_io": "32 KiB"}, SRC_SQLIO))
    total = per_server * d.instances
    r.add("iops_total", Figure("IOPS, all servers", total, "IOPS",
                               "iops_per_server x instances", {"instances": d.instances}, src))
    capacity = p.dataset * d.instances * (1 + d.growth_pct / 100)
    r.add("capacity", Figure("Capacity, all servers", capacity, "bytes",
                             "dataset x instances x (1 + growth)",
                             {"dataset": p.dataset, "instances": d.instances,
                              "growth": d.growth_pct / 100}, src))
    r.checks.append(at_least(
        "Dataset larger than the server's RAM", p.dataset, d.ram, "bytes",
        "Dataset per server (if it fits in RAM the database caches it and storage is "
        "barely touched)", "ARCHITECTURE: warn when the working set fits in cache"))
    if d.nodes is not None:
        worst = per_node_after_failure(d.instances, d.nodes, d.failures)
        r.add("instances_per_node_worst", Figure(
            f"Database servers per node, {d.failures} node(s) down", worst, "servers",
            "ceil(instances / (nodes - failures))",
            {"instances": d.instances, "nodes": d.nodes, "failures": d.failures},
            "ESRP practice: validate one node's load after the failure (seed 000)"))
        r.add("iops_per_node_worst", Figure(
            "IOPS per node after the failure", worst * per_server, "IOPS",
            "instances_per_node_worst x iops_per_server",
            {"instances_per_node_worst": worst, "iops_per_server": per_server}, src))
    r.demand = {"kind": "oltp", "cores": d.vcpus * d.instances, "ram_bytes": d.ram * d.instances,
                "capacity_bytes": capacity, "iops": total,
                "explain": f"{d.instances} database server(s) x {d.vcpus} vCPU (1 vCPU = 1 "
                           f"core) / their RAM, dataset and IOPS"}
    r.notes.append("Latency targets: all-flash databases usually expect <= 1 ms average "
                   "(Dell Ready Solutions for SQL); the emitted scenario uses p99 thresholds.")
    return r

"""OLTP (SQL Server style) database sizing: IOPS, throughput, capacity, CPU and RAM demand.

Two ways in (reference `sizing-rules.md` §3): an IO profile per database server (the X-Ray
presets, or your own data/log IOPS), or a transaction rate (TPS, or TPM as HammerDB reports
it) with per-transaction IO you calibrated (§3.2: literature constants are not safe to
hard-code). Modules: `profiles`, `transactions`; this one validates and adds the figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.exitcodes import UserError
from assay.sizing.explain import GIB, Bytes, Figure, Result, at_least, ceil_div
from assay.sizing.oltp.profiles import (
    DATA_IO_BYTES,
    LOG_IO_BYTES,
    PRESETS,
    SRC_SQLIO,
    SRC_XRAY,
    OltpProfile,
    with_dataset,
)
from assay.sizing.oltp.transactions import (
    SRC_LOG_RULE,
    SRC_TPM,
    SRC_TXN,
    Transactions,
    profile_from_transactions,
    transaction_profile,
)

__all__ = ["DATA_IO_BYTES", "LOG_IO_BYTES", "PRESETS", "OltpDesign", "OltpProfile",
           "Transactions", "per_node_after_failure", "profile_from_transactions", "size",
           "transaction_profile", "validate", "with_dataset"]

SRC_N1 = "ESRP practice: validate one node's load after the failure (seed 000)"


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
    if p.dataset <= 0 or p.log_dataset >= p.dataset:
        raise UserError("--dataset must be positive (and larger than its log files)")
    if d.vcpus < 1 or d.ram <= 0:
        raise UserError("--vcpus and --ram must be positive")
    if d.growth_pct < 0:
        raise UserError(f"--growth cannot be negative, got {d.growth_pct}")
    if d.failures < 0:
        raise UserError(f"--failures cannot be negative, got {d.failures}")
    if d.nodes is not None and d.nodes <= d.failures:
        raise UserError(f"--nodes {d.nodes} leaves no node after {d.failures} failure(s)")


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
    src = SRC_TXN if d.transactions else (SRC_XRAY if d.preset else "your profile")
    if d.transactions is not None:
        _transaction_figures(d, r, d.transactions)
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
    data_mbps, log_mbps = p.data_iops * DATA_IO_BYTES / 1e6, p.log_iops * p.log_io_bytes / 1e6
    r.add("log_mbps", Figure(
        "Log throughput per server", log_mbps, "MB/s",
        "tps x log_bytes_per_txn / 1e6" if d.transactions else "log_iops x 32 KiB / 1e6",
        {"log_iops": p.log_iops, "log_io": Bytes(p.log_io_bytes)},
        SRC_LOG_RULE if d.transactions else SRC_SQLIO))
    r.add("mbps_per_server", Figure(
        "Throughput per server", data_mbps + log_mbps, "MB/s",
        "data_iops x 10.4 KiB / 1e6 + log_mbps",
        {"data_io": "90 % 8 KiB + 10 % 32 KiB", "log_mbps": log_mbps}, SRC_SQLIO))
    total = per_server * d.instances
    r.add("iops_total", Figure("IOPS, all servers", total, "IOPS",
                               "iops_per_server x instances", {"instances": d.instances}, src))
    _capacity(d, r, src)
    if d.nodes is not None:
        _failure_load(d, r, src)
    r.demand = {"kind": "oltp", "cores": d.vcpus * d.instances, "ram_bytes": d.ram * d.instances,
                "capacity_bytes": r.value("capacity"), "iops": total,
                "explain": f"{d.instances} database server(s) x {d.vcpus} vCPU (1 vCPU = 1 "
                           f"core) / their RAM, dataset and IOPS"}
    r.notes.append("Latency targets: all-flash databases usually expect <= 1 ms average "
                   "(Dell Ready Solutions for SQL); the emitted scenario uses p99 thresholds.")
    return r


def _transaction_figures(d: OltpDesign, r: Result, t: Transactions) -> None:
    p = d.profile
    r.add("tps", Figure("Transactions per second per server", t.tps, "TPS", "given, or tpm / 60",
                        {}, SRC_TPM))
    r.add("tpm", Figure("Transactions per minute per server", t.tpm, "TPM", "tps x 60", {},
                        SRC_TPM))
    r.add("tpm_total", Figure("Transactions per minute, all servers", t.tpm * d.instances,
                              "TPM", "tpm x instances", {"instances": d.instances}, SRC_TPM))
    if t.measured:
        r.add("data_iops", Figure(
            "Data IOPS per server", p.data_iops, "IOPS",
            "tps x reads_per_txn x (1 - hit_ratio) + tps x writes_per_txn",
            {"tps": t.tps, "reads_per_txn": t.reads_per_txn, "hit_ratio": t.hit_ratio,
             "writes_per_txn": t.writes_per_txn}, SRC_TXN))
    else:
        r.add("data_iops", Figure(
            "Data IOPS per server (declared)", p.data_iops, "IOPS",
            "given (--data-iops or the preset)", {"preset": d.preset or "custom"},
            SRC_XRAY if d.preset else "your profile"))
        r.add("data_io_per_txn", Figure(
            "Data IOs per transaction (from the declared IOPS)", p.data_iops / t.tps, "IO",
            "data_iops / tps", {"data_iops": p.data_iops, "tps": t.tps}, SRC_TXN))
    r.add("log_iops", Figure(
        "Log IOPS per server", p.log_iops, "IOPS",
        "max(tps, tps x log_bytes_per_txn / 32 KiB): a flush per commit, 32 KiB at most",
        {"tps": t.tps, "log_bytes_per_txn": Bytes(t.log_bytes_per_txn)}, SRC_SQLIO))


def _capacity(d: OltpDesign, r: Result, src: str) -> None:
    p = d.profile
    r.add("data_file_size", Figure(
        "Data per data file", p.data_file_size, "bytes",
        "(dataset - log files) / data_files: spread evenly (proportional fill)",
        {"dataset": Bytes(p.dataset), "log_files_bytes": Bytes(p.log_dataset),
         "data_files": p.data_files}, "SQL Server proportional fill (seed 000)"))
    capacity = p.dataset * d.instances * (1 + d.growth_pct / 100)
    r.add("capacity", Figure("Capacity, all servers", capacity, "bytes",
                             "dataset x instances x (1 + growth)",
                             {"dataset": Bytes(p.dataset), "instances": d.instances,
                              "growth": d.growth_pct / 100}, src))
    r.checks.append(at_least(
        "Dataset larger than the server's RAM", p.dataset, d.ram, "bytes",
        "Dataset per server (if it fits in RAM the database caches it and storage is "
        "barely touched)", "ARCHITECTURE: warn when the working set fits in cache"))


def _failure_load(d: OltpDesign, r: Result, src: str) -> None:
    assert d.nodes is not None
    worst = per_node_after_failure(d.instances, d.nodes, d.failures)
    per_server = r.value("iops_per_server")
    r.add("instances_per_node_worst", Figure(
        f"Database servers per node, {d.failures} node(s) down", worst, "servers",
        "ceil(instances / (nodes - failures))",
        {"instances": d.instances, "nodes": d.nodes, "failures": d.failures}, SRC_N1))
    r.add("iops_per_node_worst", Figure(
        "IOPS per node after the failure", worst * per_server, "IOPS",
        "instances_per_node_worst x iops_per_server",
        {"instances_per_node_worst": worst, "iops_per_server": per_server}, src))
    t = d.transactions
    if t is not None:
        r.add("tpm_per_node", Figure(
            "Transactions per minute per node, all nodes up", t.tpm * d.instances / d.nodes,
            "TPM", "tpm_total / nodes (linear scaling, seed 004)", {"nodes": d.nodes},
            SRC_TPM))
        r.add("tpm_per_node_worst", Figure(
            "Transactions per minute per node after the failure", worst * t.tpm, "TPM",
            "instances_per_node_worst x tpm", {"instances_per_node_worst": worst}, SRC_N1))

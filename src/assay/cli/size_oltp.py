"""`assay size oltp`: the options; the sizing is assay.sizing.oltp."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from assay.cli.size_common import (
    COUNT,
    NODE_OPTIONS,
    SIZE,
    check_duration,
    emit_option,
    finish,
    output,
    state_units,
)
from assay.exitcodes import UserError
from assay.sizing import emit, oltp


def _profile(preset: str | None, overrides: dict[str, Any]) -> oltp.OltpProfile:
    base = oltp.PRESETS[preset or "standard"]
    given = {k: v for k, v in overrides.items() if v is not None}
    if "dataset" in given:
        base = oltp.with_dataset(base, given.pop("dataset"))
    return replace(base, **given)


@click.command("oltp")
@output([
    click.option("--preset", type=click.Choice(sorted(oltp.PRESETS)),
                 help="X-Ray profile per server: standard 4,000 data + 200 log IOPS; medium "
                      "6,000 + 300 over 568 GiB; high 6,000 + 400 [default: standard]."),
    click.option("--data-iops", type=float, help="Data file IOPS per server (overrides preset)."),
    click.option("--log-iops", type=float, help="Log IOPS per server (overrides preset)."),
    click.option("--read-pct", type=float, help="Share of data IOPS that are reads, %."),
    click.option("--data-files", type=int, help="Data files per server."),
    click.option("--log-files", type=int, help="Log files per server."),
    click.option("--dataset", type=SIZE, help="Database size per server, data and log files "
                                              "(decimal GB, or GiB)."),
    click.option("--tps", type=COUNT, help="Transactions per second per server (switches to "
                                           "the transaction model)."),
    click.option("--tpm", type=COUNT, help="Transactions per minute per server, as HammerDB "
                                           "reports them (e.g. 1.05M); instead of --tps."),
    click.option("--reads-per-txn", type=float,
                 help="Page reads per transaction (measure them; or declare --data-iops)."),
    click.option("--writes-per-txn", type=float,
                 help="Page writes per transaction reaching the data files (checkpoints)."),
    click.option("--log-per-txn", type=SIZE, default="4KiB", show_default=True,
                 help="Log bytes per transaction."),
    click.option("--hit-ratio", type=float, default=0.0, show_default=True,
                 help="Buffer cache hit ratio, 0-1 (0 = every read reaches storage)."),
    click.option("--instances", type=int, default=1, show_default=True,
                 help="Database servers with this profile."),
    click.option("--vcpus", type=int, default=4, show_default=True,
                 help="vCPUs per database server (counted 1:1 as cores)."),
    click.option("--ram", type=SIZE, default="4GiB", show_default=True,
                 help="RAM per database server."),
    click.option("--growth", type=float, default=0.0, show_default=True,
                 help="Capacity growth to provision, %."),
    *NODE_OPTIONS,
    click.option("--data-latency", default="20ms", show_default=True,
                 help="p99 data read latency threshold in the emitted scenario."),
    click.option("--log-latency", default="10ms", show_default=True,
                 help="p99 log write latency threshold in the emitted scenario."),
    emit_option(),
])
def command(preset: str | None, data_iops: float | None, log_iops: float | None,
            read_pct: float | None, data_files: int | None, log_files: int | None,
            dataset: int | None, tps: float | None, tpm: float | None,
            reads_per_txn: float | None, writes_per_txn: float | None, log_per_txn: int,
            hit_ratio: float, instances: int, vcpus: int, ram: int, growth: float,
            nodes: int | None, failures: int, duration: str, warmup: str, data_latency: str,
            log_latency: str, emit_path: str | None, as_json: bool, explain: bool) -> None:
    """OLTP database servers: IOPS, throughput, capacity, TPM, and one node's load after a
    failure."""
    if tps is not None and tpm is not None:
        raise UserError("give either --tps or --tpm, not both")
    rate = tps if tps is not None else (tpm / 60 if tpm is not None else None)
    overrides = {"data_iops": data_iops, "log_iops": log_iops, "read_pct": read_pct,
                 "data_files": data_files, "log_files": log_files, "dataset": dataset}
    profile = _profile(preset, overrides)
    transactions = None
    if rate is not None:
        if log_iops is not None:
            raise UserError("--log-iops does not combine with --tps/--tpm: the log comes from "
                            "the transactions (--log-per-txn)")
        transactions = oltp.Transactions(rate, reads_per_txn, writes_per_txn, log_per_txn,
                                         hit_ratio)
        declared = preset is not None or data_iops is not None
        profile = oltp.transaction_profile(transactions, profile, declared)
    elif reads_per_txn is not None or writes_per_txn is not None:
        raise UserError("--reads-per-txn/--writes-per-txn need a transaction rate: --tps or "
                        "--tpm")
    data_given = any(v is not None for k, v in overrides.items() if k != "dataset")
    label = None if data_given else (preset or ("standard" if rate is None else None))
    d = oltp.OltpDesign(profile=profile, preset=label, transactions=transactions,
                        instances=instances, vcpus=vcpus, ram=ram, growth_pct=growth,
                        nodes=nodes, failures=failures)
    result = oltp.size(d)
    scenario = None
    if emit_path:
        for opt, text in (("--data-latency", data_latency), ("--log-latency", log_latency),
                          ("--duration", duration), ("--warmup", warmup)):
            check_duration(opt, text)
        scenario = emit.oltp_scenario(d, result, data_latency, log_latency, duration, warmup)
    finish(result, as_json, explain, scenario, emit_path)


state_units(command)

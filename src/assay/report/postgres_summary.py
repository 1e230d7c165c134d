"""The terminal's line per database workload: its components count transactions, not IOs, so
say it in a database's units (tx/s, TPM, NOPM, failed) beside the IO tables."""

from __future__ import annotations

from rich.console import Console

from assay.results.record import RunRecord
from assay.scenario.units import format_latency_ms


def print_databases(console: Console, run: RunRecord) -> None:
    for wl, params in run.plan.workloads.items():
        tx = run.stats.get(f"{wl}.tx.commit")
        if params.get("kind") != "postgres" or tx is None:
            continue
        failed = run.stats.get(f"{wl}.tx.failed")
        lag = run.stats.get(f"{wl}.tx.lag")
        new_order = run.stats.get(f"{wl}.new_order.commit")
        parts = [f"{tx.iops:,.1f} tx/s", f"TPM {tx.iops * 60:,.0f}"]
        if new_order is not None:
            parts.append(f"NOPM {new_order.iops * 60:,.0f}")
        parts.append(f"p99 {format_latency_ms(tx.lat_p99_ms)}")
        if lag is not None:
            parts.append(f"schedule lag p99 {format_latency_ms(lag.lat_p99_ms)}")
        parts.append(f"failed {failed.ios if failed else 0:,}")
        console.print(f"  database {wl}: " + ", ".join(parts))

"""A run's metrics as Prometheus families: one catalogue of names, shared by the live
endpoint (`assay run --metrics`) and the backfill export (`assay export --format openmetrics`),
so that a dashboard reads both the same way.

Names follow Prometheus' conventions: base units (seconds, bytes, ratios), `_total` on
counters, the unit at the end of the name. Rows are the run directory's own rows: `series`
(one per second and component, latencies in ms) and `hosts` (utilisation per second).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.metrics.exposition import Family

QUANTILES = (("0.5", "lat_p50_ms"), ("0.99", "lat_p99_ms"), ("0.999", "lat_p999_ms"))
CPU_MODES = (("total", "cpu_pct"), ("user", "cpu_user_pct"), ("system", "cpu_system_pct"),
             ("iowait", "cpu_iowait_pct"))


def catalogue() -> dict[str, Family]:
    """Every family, empty, in the order they are exposed."""
    fams = [
        Family("assay_run", "info", "The run: its id and scenario."),
        Family("assay_phase", "gauge", "1 for the run's current phase (prefill, warmup, run, "
               "ended), 0 for the others."),
        Family("assay_load_elapsed_seconds", "gauge", "Seconds since the load started, as of "
               "the last measured second.", "seconds"),
        Family("assay_achieved_iops", "gauge", "IO operations per second a component completed "
               "over the last measured second."),
        Family("assay_target_iops", "gauge", "IO operations per second the component is paced "
               "at (fixed-rate components only)."),
        Family("assay_achieved_bytes_per_second", "gauge", "Bytes per second a component moved "
               "over the last measured second."),
        Family("assay_latency_seconds", "summary", "IO latency from submission to completion: "
               "quantiles of the last second's merged histogram; sum and count since the load "
               "started.", "seconds"),
        Family("assay_due_latency_p99_seconds", "gauge", "99th percentile of latency from each "
               "IO's due time (fixed-rate components; coordinated omission included).",
               "seconds"),
        Family("assay_behind_seconds", "gauge", "How far a fixed-rate component lags its "
               "schedule.", "seconds"),
        Family("assay_io_bytes", "counter", "Bytes moved since the load started.", "bytes"),
        Family("assay_threshold_passing", "gauge", "1 while a threshold holds over the measured "
               "seconds so far, 0 once it fails."),
        Family("assay_host_active", "gauge", "1 while a host takes part in the run, 0 once it "
               "is lost."),
        Family("assay_host_cpu_ratio", "gauge", "Host CPU busy share over the last second, by "
               "mode.", "ratio"),
        Family("assay_host_memory_used_ratio", "gauge", "Host memory in use (MemTotal less "
               "MemAvailable).", "ratio"),
        Family("assay_host_network_bytes_per_second", "gauge", "Host network throughput per "
               "NIC and direction over the last second."),
        Family("assay_timeline_steps", "counter", "Timeline steps ended, by action and "
               "outcome."),
    ]
    return {f.name: f for f in fams}


def workload_of(component: str) -> str:
    return component.split(".", 1)[0]


def workload_hosts(workloads: Mapping[str, Any], hosts: list[str]) -> dict[str, str]:
    """workload -> the `host` label of its components: the host it runs on, or `cluster` in a
    run over several hosts (a component's series is merged over them)."""
    if len(hosts) > 1:
        return {w: "cluster" for w in workloads}
    return {w: str(v.get("host") or "local") if isinstance(v, Mapping) else "local"
            for w, v in workloads.items()}


def component_labels(base: Mapping[str, str], component: str,
                     hosts: Mapping[str, str]) -> dict[str, str]:
    """run_id and scenario (base), then workload, component and the host it runs on."""
    w = workload_of(component)
    return {**base, "workload": w, "component": component, "host": hosts.get(w, "local")}


class Totals:
    """Cumulative IOs, bytes and latency per component: the counters' values."""

    def __init__(self) -> None:
        self.ios: dict[str, float] = {}
        self.bytes: dict[str, float] = {}
        self.lat_s: dict[str, float] = {}

    def add(self, row: Mapping[str, Any]) -> None:
        c = str(row.get("c"))
        ios = _num(row.get("ios")) or 0.0
        self.ios[c] = self.ios.get(c, 0.0) + ios
        self.bytes[c] = self.bytes.get(c, 0.0) + (_num(row.get("bytes")) or 0.0)
        avg = _num(row.get("lat_avg_ms"))
        if avg is not None:
            self.lat_s[c] = self.lat_s.get(c, 0.0) + avg * ios / 1000.0


def add_component(fams: Mapping[str, Family], row: Mapping[str, Any], labels: Mapping[str, str],
                  totals: Totals, ts: float | None = None, due_p99_ms: float | None = None) \
        -> None:
    """One series row (one component, one second) into the families; `totals` must already
    count it."""
    c = str(row.get("c"))
    fams["assay_achieved_iops"].add(_num(row.get("iops")), labels, timestamp=ts)
    fams["assay_target_iops"].add(_num(row.get("target_iops")), labels, timestamp=ts)
    mbps = _num(row.get("mbps"))
    fams["assay_achieved_bytes_per_second"].add(None if mbps is None else mbps * 1e6, labels,
                                                timestamp=ts)
    lat = fams["assay_latency_seconds"]
    for q, key in QUANTILES:
        ms = _num(row.get(key))
        lat.add(None if ms is None else round(ms / 1000.0, 9), {**labels, "quantile": q},
                timestamp=ts)
    lat.add(round(totals.lat_s.get(c, 0.0), 9), labels, suffix="_sum", timestamp=ts)
    lat.add(totals.ios.get(c, 0.0), labels, suffix="_count", timestamp=ts)
    if due_p99_ms is not None:
        fams["assay_due_latency_p99_seconds"].add(round(due_p99_ms / 1000.0, 9), labels,
                                                  timestamp=ts)
    if row.get("target_iops"):
        fams["assay_behind_seconds"].add(_num(row.get("behind_s")), labels, timestamp=ts)
    fams["assay_io_bytes"].add(totals.bytes.get(c, 0.0), labels, timestamp=ts)


def add_host(fams: Mapping[str, Family], row: Mapping[str, Any], labels: Mapping[str, str],
             ts: float | None = None) -> None:
    """One hosts row (one host, one second): CPU by mode, memory, network per NIC."""
    for mode, key in CPU_MODES:
        pct = _num(row.get(key))
        fams["assay_host_cpu_ratio"].add(None if pct is None else round(pct / 100.0, 6),
                                         {**labels, "mode": mode}, timestamp=ts)
    mem = _num(row.get("mem_used_pct"))
    fams["assay_host_memory_used_ratio"].add(None if mem is None else round(mem / 100.0, 6),
                                             labels, timestamp=ts)
    for key, value in row.items():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "net" and parts[2] in ("rx_mbps", "tx_mbps"):
            v = _num(value)
            fams["assay_host_network_bytes_per_second"].add(
                None if v is None else round(v * 1e6, 3),
                {**labels, "nic": parts[1], "direction": "receive" if parts[2] == "rx_mbps"
                 else "transmit"}, timestamp=ts)


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)

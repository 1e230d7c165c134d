"""Write the scenario that validates a sizing the ESRP way: one server's (or node's) load,
by default after the worst failure, graded by the thresholds the design was sized for (seed
000: the Nutanix ESRP was tested with N-1 nodes). The YAML text itself: scenario_text.py.
"""

from __future__ import annotations

from assay.exitcodes import UserError
from assay.sizing.backup import BackupDesign
from assay.sizing.exchange import ExchangeDesign, load_name
from assay.sizing.explain import Result
from assay.sizing.oltp import OltpDesign
from assay.sizing.scenario_text import (
    QUICK_CHECK_DATASET,
    document,
    fio_size,
    header,
    scalar,
    scenario_name,
    size_value,
    write,
)
from assay.sizing.units import format_size
from assay.sizing.vdi import VdiDesign

__all__ = ["backup_scenario", "exchange_scenario", "oltp_scenario", "vdi_scenario", "write"]

JETSTRESS_TIMELINE = "{duration: 2h, warmup: 5m}"  # Jetstress performance test: 2 hours
LOADS = ("worst", "normal")


def exchange_scenario(d: ExchangeDesign, r: Result, load: str = "worst") -> str:
    """One Jetstress server's load: after the worst failure (ESRP N-1, the default) or in
    normal operation."""
    if load not in LOADS:
        raise UserError(f"--emit-load must be worst or normal, got {load}")
    failed = d.worst_failures if load == "worst" else 0
    key = "worst" if failed else "normal"
    name = load_name(failed)
    mailboxes = int(r.value(f"active_per_server_{key}"))
    per_mailbox = r.value(f"jetstress_iops_{key}") / mailboxes
    if len(d.tiers) == 1:
        why = (f"{d.tiers[0].messages_per_day} messages/day x 0.00067"
               + (" + 20 % headroom" if d.headroom else ""))
    else:
        why = "weighted over the tiers" + (", 20 % headroom included" if d.headroom else "")
    dataset = r.value(f"jetstress_dataset_{key}")
    passive = r.value(f"db_iops_per_server_{key}") - r.value(f"jetstress_iops_{key}")
    quota = sum(t.count * t.mailbox_size for t in d.tiers) / d.mailboxes
    wl = ["  mail:", "    kind: exchange",
          f"    mailboxes: {mailboxes}   # active mailboxes one server carries, {name}",
          f"    iops_per_mailbox: {per_mailbox:.10g}   # {why} (headroom is not re-added)",
          f"    mailbox_size: {size_value(quota)}",
          f"    databases: {int(r.value(f'jetstress_databases_{key}'))}   # databases one "
          f"server mounts, {name}",
          f"    # the Jetstress dataset, mailboxes x quota. For a quick check scale it down "
          f"(e.g. {fio_size(min(dataset, QUICK_CHECK_DATASET))}) - a dataset that fits in "
          f"cache flatters the result",
          f"    dataset: {size_value(dataset)}",
          f"    # passive copies add {passive:,.0f} IOPS of database IO in production "
          f"({d.passive_io_pct:g} % of an active copy's), not simulated here, as in Jetstress"]
    tiers = ", ".join(f"{t.count:,} x {t.messages_per_day} msgs/day" for t in d.tiers)
    desc = (f"Exchange {d.version}: {d.mailboxes:,} mailboxes ({tiers}), {d.copies} copies on "
            f"{d.servers} servers. This is one Jetstress server's load in {name}, graded "
            f"with Jetstress' strict thresholds.")
    thresholds = ["  mail: jetstress-strict   # DB read avg <= 20 ms, max <= 100 ms; log write "
                  "avg <= 10 ms, max <= 100 ms; achieved IOPS >= target"]
    label = f"n-{failed}" if failed else "normal"
    return document(f"exchange-{label}-validation", desc, wl, JETSTRESS_TIMELINE, thresholds,
                    header(r, ("iops_total", "jetstress_iops_normal", "jetstress_iops_worst",
                               "cpu_worst")))


def _require_nodes(nodes: int | None) -> int:
    if nodes is None:
        raise UserError("--emit-scenario needs --nodes: the scenario carries one node's load "
                        "after the worst failure, total / (nodes - failures)")
    return nodes


def oltp_scenario(d: OltpDesign, r: Result, data_latency: str, log_latency: str,
                  duration: str = "1h", warmup: str = "5m") -> str:
    """The database servers one node runs after `failures` nodes are lost, as one workload."""
    _require_nodes(d.nodes)
    k = int(r.value("instances_per_node_worst"))
    p = d.profile
    what = f"preset {d.preset}" if d.preset else "custom profile"
    wl = ["  db:", "    kind: oltp",
          f"    data_iops: {scalar(round(p.data_iops * k, 1))}   # {k} database server(s) x "
          f"{p.data_iops:g} ({what})",
          f"    log_iops: {scalar(round(p.log_iops * k, 1))}",
          f"    read_pct: {scalar(round(p.read_pct, 1))}",
          f"    data_files: {p.data_files * k}",
          f"    log_files: {p.log_files * k}",
          f"    dataset: {fio_size(p.dataset * k)}   # scale down for a quick check; keep it "
          f"larger than the platform's cache"]
    if d.transactions is not None:
        wl.insert(3, f"    # the oltp workload writes 32 KiB per log IO; sized: "
                     f"{format_size(p.log_io_bytes)} per flush")
    desc = (f"OLTP: {d.instances} database server(s) ({what}) on {d.nodes} nodes. This is one "
            f"node's load with {d.failures} node(s) down (N-{d.failures}): {k} server(s).")
    thresholds = [f"  db.data.read.lat_p99: {scalar('< ' + data_latency)}",
                  f"  db.log.write.lat_p99: {scalar('< ' + log_latency)}",
                  f"  db.iops: {scalar('>= target')}"]
    return document(scenario_name("oltp", d.failures), desc, wl,
                    f"{{duration: {duration}, warmup: {warmup}}}", thresholds,
                    header(r, ("iops_total", "tpm_total", "iops_per_node_worst")))


def vdi_scenario(d: VdiDesign, r: Result, latency: str, duration: str = "1h",
                 warmup: str = "5m") -> str:
    """The desktops one node runs after `failures` nodes are lost (steady state)."""
    _require_nodes(d.nodes)
    k = int(r.value("desktops_per_node_worst"))
    wl = ["  vdi:", "    kind: vdi", f"    profile: {d.profile}",
          f"    desktops: {k}   # desktops one node carries after the worst failure"]
    desc = (f"VDI: {d.desktops} {d.profile} desktops on {d.nodes} nodes. This is one node's "
            f"steady-state load with {d.failures} node(s) down (N-{d.failures}): {k} desktops.")
    thresholds = [f"  vdi.iops: {scalar('>= target')}",
                  f"  vdi.io.read.lat_p99: {scalar('< ' + latency)}",
                  f"  vdi.io.write.lat_p99: {scalar('< ' + latency)}"]
    return document(scenario_name("vdi", d.failures), desc, wl,
                    f"{{duration: {duration}, warmup: {warmup}}}", thresholds,
                    header(r, ("iops_steady", "iops_per_node_worst")))


def backup_scenario(d: BackupDesign, r: Result, duration: str = "10m",
                    warmup: str = "1m") -> str:
    """One backup stream with the sized targets and outstanding IO, graded on its MB/s."""
    need = r.figures.get("required_throughput") or r.figures["throughput"]
    dataset = min(d.dataset or QUICK_CHECK_DATASET, QUICK_CHECK_DATASET)
    wl = ["  backup:", "    kind: backup",
          f"    targets: {d.targets}   # backup target files",
          f"    outstanding: {d.outstanding}   # IOs in flight per target (SQL Server: 1-2)",
          "    # the data read; keep it larger than the platform's cache",
          f"    dataset: {size_value(dataset)}"]
    desc = (f"Backup stream to {d.targets} target files, {d.outstanding} IO(s) outstanding "
            f"each: it must sustain {need.value:,.0f} MB/s ({need.label.lower()}).")
    thresholds = [f"  backup.source.read.mbps: {scalar('>= ' + format(need.value, '.6g'))}"]
    return document("backup-validation", desc, wl,
                    f"{{duration: {duration}, warmup: {warmup}}}", thresholds,
                    header(r, ("throughput", "required_throughput", "backup_hours")))

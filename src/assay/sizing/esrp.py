"""The scenario ESRP validates on a cluster (`assay size exchange --emit-load cluster`).

Every Jetstress server's load runs on its own host (`hosts: all`); one server is lost at the
middle of the run; its databases are activated on the survivors, as a DAG does, so each
survivor steps up from its normal load to its N-1 load (seed 003's three servers: 2,420 ->
3,630 IOPS each); Jetstress' strict thresholds grade the run before and after the loss.

A server's load is `servers - 1` instances (`count_per_host`), each 1/(servers - 1) of its
mailboxes and databases, with `failover`: a lost server's instances restart one on each
survivor (round robin), so each survivor takes one more instance, 1/(servers - 1) of a
server's load, exactly the N-1 load. `--emit-iops` scales every rate (`load.scale`) and
`--emit-dataset` sizes the data for a small lab; `--emit-duration` shortens the run.
"""

from __future__ import annotations

import math

from assay.exitcodes import UserError
from assay.sizing.exchange import ExchangeDesign
from assay.sizing.explain import Result
from assay.sizing.scenario_text import header, scalar, size_value
from assay.sizing.units import format_size

ACTIVATION_S = 30.0  # a DAG activates a lost server's databases on the survivors within this
STRICT = ("db.read.lat_avg <= 20ms", "db.read.lat_max_sample <= 100ms",
          "log.write.lat_avg <= 10ms", "log.write.lat_max_sample <= 100ms",
          "db.iops >= target")


def cluster_scenario(d: ExchangeDesign, r: Result, iops: float | None = None,
                     dataset: int | None = None, duration: float = 7200.0) -> str:
    """The cluster scenario: each server's normal load on its host, the last server lost at
    the middle of the run, its load moved to the survivors."""
    n = d.servers
    if n < 2:
        raise UserError("--emit-load cluster needs --servers 2 or more: one server is lost "
                        "and the others take its databases")
    if duration < 20:
        raise UserError("--emit-duration must be at least 20s: before and after the loss "
                        "are graded")
    if iops is not None and iops <= 0:
        raise UserError(f"--emit-iops must be positive, got {iops:g}")
    k = n - 1  # instances per server: one for each survivor to take
    mailboxes = int(r.value("active_per_server_normal"))
    sized = r.value("jetstress_iops_normal")
    per_mailbox = sized / mailboxes
    databases = int(r.value("jetstress_databases_normal"))
    data = float(dataset if dataset is not None else r.value("jetstress_dataset_normal"))
    scale = (iops / sized) if iops is not None else 1.0
    server_iops = sized * scale
    warmup = min(300.0, round(duration / 8))
    after = min(ACTIVATION_S, round(duration / 10))
    quota = sum(t.count * t.mailbox_size for t in d.tiers) / d.mailboxes
    fail_at = round(duration / 2)
    lines = [f"# {h}" for h in header(r, ("iops_total", "jetstress_iops_normal",
                                          "jetstress_iops_worst"))][:-1]
    lines += [f"# Run it with: assay run <this file> --hosts <an inventory of {n} hosts, one "
              f"per Jetstress server>",
              "name: exchange-esrp-cluster-validation",
              "description: " + scalar(
                  f"Exchange {d.version}: {d.mailboxes:,} mailboxes, {d.copies} copies on {n} "
                  f"servers, each server's Jetstress load on its own host; the last server "
                  f"is lost at the middle of the run and its databases are activated on the "
                  f"{k} survivors, each stepping up from {server_iops:,.0f} to "
                  f"{server_iops * n / k:,.0f} IOPS (N-1); Jetstress' strict thresholds "
                  f"before and after the loss."),
              "workloads:", "  mail:", "    kind: exchange",
              "    hosts: all   # one Jetstress server per host",
              f"    count_per_host: {k}   # a server's databases in {k} parts: one for each "
              f"survivor to activate",
              f"    mailboxes: {math.ceil(mailboxes / k)}   # one part: {mailboxes:,} active "
              f"mailboxes per server / {k}",
              f"    iops_per_mailbox: {per_mailbox:.10g}",
              f"    mailbox_size: {size_value(quota)}",
              f"    databases: {max(1, math.ceil(databases / k))}   # of the {databases} one "
              f"server mounts",
              f"    dataset: {size_value(data / k)}   # one part's; {format_size(data)} per "
              f"server" + ("" if dataset is not None else " (the sized Jetstress dataset)")]
    if scale != 1.0:
        lines.append(f"    load: {{scale: {scalar(round(scale, 9))}}}   # {server_iops:,.1f} "
                     f"IOPS per server instead of the sized {sized:,.1f} (--emit-iops)")
    lines += [f"    failover: {{after: {scalar(float(after))}}}   # the DAG activates the lost "
              f"server's databases on the survivors",
              "timeline:",
              f"  duration: {scalar(float(duration))}",
              f"  warmup: {scalar(float(warmup))}",
              "  steps:",
              "    # on a lab cluster the lab cuts the host's link; elsewhere add `run:` (IPMI, "
              "virsh destroy, a cloud CLI: docs/hosts.md)",
              f"    - {{action: host_fail, at: {scalar(float(fail_at))}, host: \"-1\"}}",
              "thresholds:   # Jetstress strict, before the loss and after it"]
    lines += [f"  - mail.{t} before" for t in STRICT]
    lines += [f"  - mail.{t} after host_fail" for t in STRICT]
    return "\n".join(lines) + "\n"

"""Write the scenario that validates a sizing the ESRP way: one server's (or node's) load after
the worst failure, graded by the thresholds that design was sized for (seed 000: the Nutanix
ESRP was tested with N-1 nodes).

The text is written by hand so it can carry comments that teach; every value goes through
`_scalar`, so the result is always valid YAML (the tests load it back).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

from assay.exitcodes import UserError
from assay.sizing.exchange import ExchangeDesign
from assay.sizing.explain import GIB, MIB, Result, fmt
from assay.sizing.oltp import OltpDesign
from assay.sizing.vdi import VdiDesign

QUICK_CHECK_DATASET = 64 * GIB
JETSTRESS_TIMELINE = "{duration: 2h, warmup: 5m}"  # Jetstress performance test: 2 hours
TARGET_LINES = (
    "target: {platform: local}   # add `path:` (a directory on the platform under test); "
    "without it assay uses a temporary directory on this host",
)


def _scalar(v: object) -> str:
    """A YAML scalar: numbers as they are, strings double-quoted (JSON strings are YAML)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    return json.dumps(str(v), ensure_ascii=False)


def fio_size(n: float) -> str:
    """A size in fio units, rounded up so the dataset is never smaller than sized."""
    if n >= GIB:
        return f"{math.ceil(n / GIB - 1e-9)}GiB"
    return f"{max(1, math.ceil(n / MIB - 1e-9))}MiB"


def scenario_name(kind: str, failures: int) -> str:
    name = f"{kind}-n-{failures}-validation" if failures else f"{kind}-validation"
    assert re.fullmatch(r"[A-Za-z0-9_-]+", name)
    return name


def _document(name: str, description: str, workloads: Iterable[str], timeline: str,
              thresholds: Iterable[str], header: Iterable[str]) -> str:
    lines = [f"# {h}" for h in header]
    lines += [f"name: {name}", f"description: {_scalar(description)}", *TARGET_LINES,
              "workloads:", *workloads, f"timeline: {timeline}", "thresholds:", *thresholds]
    return "\n".join(lines) + "\n"


def _header(result: Result) -> list[str]:
    head = ["Written by `assay size` - the design this scenario validates:"]
    for key in ("iops_total", "iops_steady", "iops_per_server", "iops_per_node_worst",
                "cpu_worst"):
        f = result.figures.get(key)
        if f:
            head.append(f"  {f.label}: {fmt(f.value, f.unit)}")
    failed = result.failed
    if result.checks:
        head.append("  design rules: " + ("all hold" if not failed else
                                          "FAILING: " + "; ".join(c.rule for c in failed)))
    head.append("Run it with: assay run <this file>")
    return head


def exchange_scenario(d: ExchangeDesign, r: Result) -> str:
    """One Exchange server's database load with `failures` servers down (ESRP N-1 test)."""
    failures = d.worst_failures
    mailboxes = int(sum(math.ceil(t.count * d.copies / d.servers) for t in d.tiers))
    msgs = {t.messages_per_day for t in d.tiers}
    wl = ["  mail:", "    kind: exchange",
          f"    mailboxes: {mailboxes}   # mailbox copies one server carries after the worst "
          f"failure ({failures} server(s) down)"]
    per_mailbox = r.figures["iops_per_server"].value / mailboxes
    # the 3-decimal figure Jetstress is given, so the target matches the sizing exactly
    if len(msgs) == 1:
        why = (f"{d.tiers[0].messages_per_day} messages/day x 0.00067"
               + (" + 20 % headroom" if d.headroom else ""))
    else:
        why = "weighted over the tiers" + (", 20 % headroom included" if d.headroom else "")
    wl.append(f"    iops_per_mailbox: {per_mailbox:.3f}   # {why} (headroom is not re-added)")
    avg_quota = sum(t.count * t.mailbox_size for t in d.tiers) / d.mailboxes
    wl.append(f"    mailbox_size: {fio_size(avg_quota)}")
    wl.append(f"    databases: {int(r.figures['db_copies_per_server'].value)}   # database "
              f"copies on one server")
    dataset = r.figures["db_files_per_server"].value
    quick = fio_size(min(dataset, QUICK_CHECK_DATASET))
    wl.append(f"    dataset: {fio_size(dataset)}   # the real database files of one server; "
              f"for a quick check scale it down (e.g. {quick}) - a dataset that fits in "
              f"cache flatters the result")
    tiers = ", ".join(f"{t.count} x {t.messages_per_day} msgs/day" for t in d.tiers)
    desc = (f"Exchange {d.version}: {d.mailboxes} mailboxes ({tiers}), {d.copies} copies on "
            f"{d.servers} servers. This is one server's load with {failures} server(s) down "
            f"(N-{failures}), graded with Jetstress' strict thresholds.")
    thresholds = ["  mail: jetstress-strict   # DB read avg <= 20 ms, max <= 100 ms; log write "
                  "avg <= 10 ms, max <= 100 ms; achieved IOPS >= target"]
    return _document(scenario_name("exchange", failures), desc, wl, JETSTRESS_TIMELINE,
                     thresholds, _header(r))


def _require_nodes(nodes: int | None) -> int:
    if nodes is None:
        raise UserError("--emit-scenario needs --nodes: the scenario carries one node's load "
                        "after the worst failure, total / (nodes - failures)")
    return nodes


def oltp_scenario(d: OltpDesign, r: Result, data_latency: str, log_latency: str,
                  duration: str = "1h", warmup: str = "5m") -> str:
    """The database servers one node runs after `failures` nodes are lost, as one workload."""
    _require_nodes(d.nodes)
    k = int(r.figures["instances_per_node_worst"].value)
    p = d.profile
    what = f"preset {d.preset}" if d.preset else "custom profile"
    wl = ["  db:", "    kind: oltp",
          f"    data_iops: {_scalar(round(p.data_iops * k, 1))}   # {k} database server(s) x "
          f"{p.data_iops:g} ({what})",
          f"    log_iops: {_scalar(round(p.log_iops * k, 1))}",
          f"    read_pct: {_scalar(round(p.read_pct, 1))}",
          f"    data_files: {p.data_files * k}",
          f"    log_files: {p.log_files * k}",
          f"    dataset: {fio_size(p.dataset * k)}   # scale down for a quick check; keep it "
          f"larger than the platform's cache"]
    desc = (f"OLTP: {d.instances} database server(s) ({what}) on {d.nodes} nodes. This is one "
            f"node's load with {d.failures} node(s) down (N-{d.failures}): {k} server(s).")
    thresholds = [f"  db.data.read.lat_p99: {_scalar('< ' + data_latency)}",
                  f"  db.log.write.lat_p99: {_scalar('< ' + log_latency)}",
                  f"  db.iops: {_scalar('>= target')}"]
    return _document(scenario_name("oltp", d.failures),  desc, wl,
                     f"{{duration: {duration}, warmup: {warmup}}}", thresholds, _header(r))


def vdi_scenario(d: VdiDesign, r: Result, latency: str, duration: str = "1h",
                 warmup: str = "5m") -> str:
    """The desktops one node runs after `failures` nodes are lost (steady state)."""
    _require_nodes(d.nodes)
    k = int(r.figures["desktops_per_node_worst"].value)
    wl = ["  vdi:", "    kind: vdi", f"    profile: {d.profile}",
          f"    desktops: {k}   # desktops one node carries after the worst failure"]
    desc = (f"VDI: {d.desktops} {d.profile} desktops on {d.nodes} nodes. This is one node's "
            f"steady-state load with {d.failures} node(s) down (N-{d.failures}): {k} desktops.")
    thresholds = [f"  vdi.iops: {_scalar('>= target')}",
                  f"  vdi.io.read.lat_p99: {_scalar('< ' + latency)}",
                  f"  vdi.io.write.lat_p99: {_scalar('< ' + latency)}"]
    return _document(scenario_name("vdi", d.failures), desc, wl,
                     f"{{duration: {duration}, warmup: {warmup}}}", thresholds, _header(r))


def write(path: str, text: str) -> Path:
    p = Path(path)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot write the scenario to {path}: {e.strerror}") from None
    return p

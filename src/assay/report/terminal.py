"""The terminal summary: thresholds first, then a Jetstress-like table per workload."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay.report.cluster import cluster_of, print_cluster
from assay.report.jsondoc import transactional
from assay.report.postgres_summary import print_databases
from assay.report.salvage import shout
from assay.results.printable import printable
from assay.results.record import RunRecord
from assay.results.recordparts import ComponentStats
from assay.scenario.units import format_duration, format_latency_ms

STATUS_STYLE = {"passed": "bold green", "failed": "bold red", "aborted": "bold yellow",
                "interrupted": "bold yellow", "running": "bold blue", "completed": "bold cyan",
                "incomplete": "bold yellow"}


def _num(v: float | None, fmt: str = "{:,.0f}") -> str:
    return "-" if v is None else fmt.format(v)


def print_summary(console: Console, run: RunRecord, run_dir: Path,
                  label: str | None = None) -> None:
    """`label`: the status as readers say it, when it is not run.json's (`crashed at 12s`)."""
    status = run.status
    style = STATUS_STYLE.get(status, "bold")
    console.print()
    word, detail = run.headline()
    if label and label != status:
        word, style = shout(label), "bold red"
    name = escape(printable(run.scenario.name))
    console.print(f"[{style}]{word}[/]  {name}" + (f"  {detail}" if detail else ""))
    if run.reason:
        console.print(f"[yellow]reason:[/] {run.reason}")
    if run.thresholds:
        t = Table(title="Thresholds", title_justify="left", show_edge=False, pad_edge=False)
        for col in ("", "threshold", "observed", "bound", "note"):
            t.add_column(col, justify="right" if col in ("observed", "bound") else "left")
        for r in run.thresholds:
            fmt = (lambda v: format_latency_ms(v)) if r.metric.startswith("lat_") else \
                (lambda v: _num(v, "{:,.1f}"))
            expr = r.expr
            if not expr.startswith(r.component + "."):  # applied to several: say which
                expr += f" [dim]({r.component})[/]"
            mark = "[green]✓[/]" if r.passed else "[red]✗[/]" if r.graded else "[yellow]-[/]"
            note = r.note if r.graded else "; ".join(x for x in ("not graded", r.note) if x)
            t.add_row(mark, expr, fmt(r.observed), fmt(r.bound), note)
        console.print(t)
    elif status in ("passed", "failed", "completed") and \
            not (cluster_of(run) or {}).get("thresholds"):  # platform.*: graded by the cluster
        console.print("no thresholds declared: nothing was graded")
    print_cluster(console, run)
    _workload_tables(console, run)
    print_databases(console, run)
    _database_tables(console, run)
    _host_table(console, run)
    _phase_table(console, run)
    _integrity_table(console, run)
    for w in run.warnings:
        console.print(f"[yellow]warning:[/] {w}")
    due = (run.model_extra or {}).get("due_time")  # a local run's (a cluster's: its section)
    for host, why in ((due if isinstance(due, dict) else {}).get("errors") or {}).items():
        console.print(f"[yellow]p99 from due on {host}:[/] {why}")  # its agent failed
    start, end = run.measured_window_s or (0.0, 0.0)
    g = run.graded_s  # tenths below 100 s: "graded 5.7s" must not read as the 6s measured
    graded = "" if g is None else f" (graded {g:.1f}s)" if g < 100 else \
        f" (graded {format_duration(g)})"
    console.print(f"measured {format_duration(end - start)}{graded} after "
                  f"{format_duration(start)} warm-up; results: {run_dir}")
    if (run_dir / "report.html").exists():
        console.print(f"report: {run_dir / 'report.html'}")


def _workload_tables(console: Console, run: RunRecord) -> None:
    by_wl: dict[str, list[tuple[str, ComponentStats]]] = {}
    for name, s in run.stats.items():
        wl, comp = name.split(".", 1)
        by_wl.setdefault(wl, []).append((comp, s))
    for wl, rows in by_wl.items():
        t = Table(title=f"Workload {wl}", title_justify="left", show_edge=False, pad_edge=False)
        due = any(s.intended for _, s in rows)  # latency from the due time
        for col in ("component", "target IO/s", "achieved IO/s", "MB/s", "avg", "p99",
                    "p99.9", "max", *(("p99 from due",) if due else ())):
            t.add_column(col, justify="left" if col == "component" else "right")
        for comp, s in rows:
            pct = s.achieved_pct
            achieved = _num(s.iops, "{:,.1f}")
            if pct is not None:
                achieved += f" [red]({pct:.0f}%)[/]" if pct < 99 else f" ({pct:.0f}%)"
            t.add_row(comp, _num(s.target_iops, "{:,.1f}"), achieved, _num(s.mbps, "{:,.2f}"),
                      format_latency_ms(s.lat_avg_ms), format_latency_ms(s.lat_p99_ms),
                      format_latency_ms(s.lat_p999_ms), format_latency_ms(s.lat_max_ms),
                      *((format_latency_ms(s.intended.lat_intended_p99_ms if s.intended
                                           else None),) if due else ()))
        console.print(t)
        for comp, s in rows:
            _unit_line(console, comp, s)
        trans = transactional(run).get(wl)
        if trans and len(rows) > 1:
            pct = 100 * trans["achieved_iops"] / trans["target_iops"]
            console.print(f"  transactional IO/s: {trans['achieved_iops']:,.1f} achieved of "
                          f"{trans['target_iops']:,.1f} target ({pct:.1f}%)")


def _unit_line(console: Console, comp: str, s: ComponentStats) -> None:
    """The application's own units under the IO table: accelerators kept busy, a
    checkpoint's save time."""
    tr, b = s.training or {}, s.bursts or {}
    if tr.get("au") is not None:
        wait50, wait99 = tr.get("batch_wait_p50"), tr.get("batch_wait_p99")
        console.print(f"  {comp}: AU {tr['au']:.1f}% (pass {tr.get('au_target') or 0:.0f}%), "
                      f"lowest 1 s {tr.get('au_min') or 0:.1f}%, "
                      f"{tr.get('samples_s') or 0:,.1f} samples/s, batch wait p50 "
                      f"{format_latency_ms(wait50)} p99 {format_latency_ms(wait99)}")
    if b.get("busy_max_s") is not None:
        n = int(b.get("bursts") or 0)
        console.print(f"  {comp}: longest of {n} burst{'s' if n != 1 else ''} "
                      f"{b['busy_max_s']:.1f}s at {b.get('busy_gbps') or 0:.3f} GB/s")


def _database_tables(console: Console, run: RunRecord) -> None:
    """Per database instance, as Jetstress' "Transactional I/O Performance" table."""
    for wl, params in run.plan.workloads.items():
        if params.get("kind") != "exchange" or int(params.get("databases") or 1) < 2:
            continue
        t = Table(title=f"Workload {wl}: per database (Jetstress' transactional I/O table)",
                  title_justify="left", show_edge=False, pad_edge=False)
        for col in ("instance", "DB reads/s", "read avg", "read max 15s", "DB writes/s",
                    "write avg", "log writes/s", "log write avg", "log max 15s"):
            t.add_column(col, justify="left" if col == "instance" else "right")
        for i in range(1, int(params["databases"]) + 1):
            r, w = run.stats.get(f"{wl}.db{i}.read"), run.stats.get(f"{wl}.db{i}.write")
            lg = run.stats.get(f"{wl}.log{i}.write")
            t.add_row(f"db{i}", _num(r.iops if r else None, "{:,.1f}"),
                      format_latency_ms(r.lat_avg_ms if r else None),
                      format_latency_ms(r.lat_max_sample_ms if r else None),
                      _num(w.iops if w else None, "{:,.1f}"),
                      format_latency_ms(w.lat_avg_ms if w else None),
                      _num(lg.iops if lg else None, "{:,.1f}"),
                      format_latency_ms(lg.lat_avg_ms if lg else None),
                      format_latency_ms(lg.lat_max_sample_ms if lg else None))
        console.print(t)
        if params.get("mode") == "jetstress":
            console.print("  load: closed-loop threads, graded achieved >= target (Jetstress)")
        else:
            console.print("  load: open loop at the target rate, Poisson arrivals; Jetstress "
                          "runs closed-loop threads (`mode: jetstress`, docs/fidelity.md)")


def _host_table(console: Console, run: RunRecord) -> None:
    """Host utilisation over the measured window (hosts.ndjson holds each second)."""
    if not run.hosts:
        return
    t = Table(title="Host utilisation", title_justify="left", show_edge=False, pad_edge=False)
    for col in ("host", "CPU avg", "CPU max", "user", "system", "iowait", "memory",
                "net rx MB/s", "net tx MB/s"):
        t.add_column(col, justify="left" if col == "host" else "right")
    for name, h in run.hosts.items():
        if name == "local" and len(run.hosts) > 1:  # a cluster run's: this machine's
            name = "local (controller)"
        pct = [_num(h.get(k), "{:.1f}%") for k in ("cpu_pct", "cpu_pct_max", "cpu_user_pct",
                                                    "cpu_system_pct", "cpu_iowait_pct",
                                                    "mem_used_pct")]
        t.add_row(name, *pct, _num(h.get("net_rx_mbps"), "{:,.2f}"),
                  _num(h.get("net_tx_mbps"), "{:,.2f}"))
    console.print(t)


def _phase_table(console: Console, run: RunRecord) -> None:
    """Before / during / between / after the timeline's events, per graded component."""
    totals = run.phase_totals
    if not totals:
        return
    done = sum(1 for e in run.events if e.outcome == "ok")
    keys = [k for k in ("before", "during", "between", "after") if k in totals]
    t = Table(title=f"Phases around {len(run.events)} timeline events ({done} ok)",
              title_justify="left", show_edge=False, pad_edge=False)
    for col in ("component", "phase", "seconds", "IO/s", "avg", "p99", "max", "recovery"):
        t.add_column(col, justify="left" if col in ("component", "phase") else "right")
    for comp in run.stats:
        worst = [r.components.get(comp) for r in run.recovery]
        rec = ("-" if not worst else "never" if any(v is None for v in worst)
               else format_duration(max(v for v in worst if v is not None)))
        # the phases this component ran in (a workload can arrive mid-run)
        active = [(k, s) for k in keys if (s := totals[k].stats.get(comp)) and s.seconds]
        for i, (key, s) in enumerate(active):
            t.add_row(comp if i == 0 else "", key, f"{s.seconds:.0f}", _num(s.iops, "{:,.1f}"),
                      format_latency_ms(s.lat_avg_ms), format_latency_ms(s.lat_p99_ms),
                      format_latency_ms(s.lat_max_ms), rec if i == 0 else "")
    console.print(t)


def _integrity_table(console: Console, run: RunRecord) -> None:
    """Integrity mode's verify passes: counts, throughput, the first offsets of problems."""
    d = run.integrity
    if not d:
        return
    kinds = ("lost", "stale", "corrupt", "unreadable")
    t = Table(title=f"Integrity ({d.get('status', '')})", title_justify="left", show_edge=False,
              pad_edge=False)
    for col in ("pass", "status", "checked", *kinds, "MB/s"):
        t.add_column(col, justify="left" if col in ("pass", "status") else "right")
    for p in d.get("passes", []):
        t.add_row(str(p.get("label")), str(p.get("status")), _num(p.get("checked")),
                  *(f"[red]{p[k]}[/]" if p.get(k) else "0" for k in kinds),
                  _num(p.get("mbps"), "{:,.1f}"))
    console.print(t)
    if d.get("reason"):
        console.print(f"  {d['reason']}")
    for host, h in (d.get("hosts") or {}).items():  # a cluster run: each host's own blocks
        found = ", ".join(f"[red]{h[k]} {k}[/]" for k in kinds if h.get(k)) or "no problem"
        console.print(f"  {host}: {h.get('checked', 0):,} of {h.get('blocks', 0):,} blocks, "
                      f"{h.get('acknowledged', 0):,} writes acknowledged: {found}"
                      if h.get("status") == "completed" else
                      f"  {host}: [red]not verified[/]: {h.get('reason', h.get('status'))}")
    for p in d.get("passes", []):
        for w, r in p.get("workloads", {}).items():
            for k, offsets in r.get("offsets", {}).items():
                more = " ..." if r.get(k, 0) > 10 else ""
                console.print(f"  {p.get('label')}: {w} {k} at {', '.join(map(str, offsets[:10]))}"
                              f"{more}")
        sums = p.get("data_files")
        if sums:  # the workloads' own files, by fio's verify headers (integrity/checksum.py)
            console.print(f"  {p.get('label')}: data files: {sums['checked']:,} of "
                          f"{sums['blocks']:,} blocks checksummed in {sums['files']} files, "
                          f"{sums['corrupt']} corrupt, {sums['unreadable']} unreadable")
            for w, r in sums.get("workloads", {}).items():
                bad = [f"{o['file']}@{o['offset']}" + (f" ({o['fault']})" if o.get("fault") else
                                                      f" ({o['state']})")
                       for o in r.get("offsets", [])]
                if bad:
                    more = " ..." if r["corrupt"] + r["unreadable"] > 10 else ""
                    console.print(f"  {p.get('label')}: {w} data at {', '.join(bad[:10])}{more}")

"""The cluster part of a run's summary: the merged line, the start skew, lost hosts, and a
line per host (each graded on its own `each_host.` thresholds)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from assay.report.downsample import envelope_xy
from assay.report.rundata import CHART_METRICS, MAX_POINTS, MIN_DT, Column, read_ndjson
from assay.results.blocklog import read_rows
from assay.results.record import RunRecord
from assay.scenario.units import format_latency_ms


def cluster_of(run: RunRecord) -> dict[str, Any] | None:
    extra = run.model_extra or {}
    value = extra.get("cluster")
    return value if isinstance(value, dict) else None


def returned(c: dict[str, Any]) -> dict[str, float]:
    """The hosts back in the load at the end (host_recover: their instances did IO again and
    the host was not lost again), with the time of their first IO back."""
    return {r["host"]: float(r["first_io_s"]) for r in c.get("failover") or []
            if r.get("kind") == "rejoin" and r.get("first_io_s") is not None
            and r.get("host_lost_s") is None}


def active(c: dict[str, Any]) -> int:
    """The hosts in the load at the end: never lost, or back."""
    hosts, back = c.get("hosts") or {}, returned(c)
    return sum(1 for h in hosts if h not in (c.get("lost") or {}) or h in back)


def state(r: dict[str, Any]) -> str:
    """A host's line's state: active, lost, or lost and back."""
    if not r["lost"]:
        return "active"
    return f"lost at {r['lost']['t']}s" + \
        (f", back at {r['back_s']}s" if r.get("back_s") is not None else "")


def not_graded(c: dict[str, Any]) -> dict[str, list[str]]:
    """A lost host's own thresholds on the phases after its loss: its series ends there (a
    recovered host's instances are graded in the merged series)."""
    return {h: list(g["not_graded"]) for h, g in (c.get("graded") or {}).items()
            if g.get("not_graded")}


def counted(run: RunRecord, component: str) -> bool:
    """Whether a component's rate is the host's load: fio's IOs, or a database's committed
    transactions; not a view of those (a database's failures, schedule lag, each
    transaction type)."""
    plan = run.components.get(component)
    return plan is None or not plan.view


def host_rows(run: RunRecord) -> list[dict[str, Any]]:
    """One row per host: IO/s over its load's components (`counted`), their worst p99, how
    late it started after the run's instant (the summary's start skew is the spread of
    these), lost, its verdict."""
    c = cluster_of(run) or {}
    window = (run.measured_window_s or [0.0, 0.0])
    seconds = max(float(window[1]) - float(window[0]), 1e-9)
    rows = []
    back = returned(c)
    for host, facts in (c.get("hosts") or {}).items():
        graded = (c.get("graded") or {}).get(host) or {}
        stats = {n: s for n, s in (graded.get("stats") or {}).items() if counted(run, n)}
        p99 = [s.get("lat_p99_ms") for s in stats.values() if s.get("lat_p99_ms") is not None]
        due = [s["intended"].get("lat_intended_p99_ms") for s in stats.values()
               if isinstance(s.get("intended"), dict)]  # latency from the due time
        late = (c.get("skew_ms") or {}).get("run", {}).get(host)
        lost = (c.get("lost") or {}).get(host)
        failed = [t for t in graded.get("thresholds", []) if not t.get("passed")]
        rows.append({"host": host, "iops": sum(float(s.get("iops") or 0)
                                               for s in stats.values()),
                     "ios": graded.get("ios"), "p99_ms": max(p99) if p99 else None,
                     "due_p99_ms": max((d for d in due if d is not None), default=None),
                     "late_ms": late, "lost": lost, "back_s": back.get(host),
                     "passed": graded.get("passed", True),
                     # a host with no threshold of its own has no verdict of its own
                     "graded": bool(graded.get("thresholds")) or not graded.get("passed", True),
                     "failed": failed, "fio": facts.get("fio"), "seconds": seconds})
    return rows


def cluster_data(run: RunRecord) -> dict[str, Any] | None:
    """What the HTML report draws of a cluster run: its line, its losses, a row per host."""
    c = cluster_of(run)
    if not c:
        return None
    hosts = c.get("hosts") or {}
    lost = c.get("lost") or {}
    return {"hosts": len(hosts), "active": active(c),
            "worst_skew_ms": c.get("worst_skew_ms"), "thresholds": c.get("thresholds") or [],
            "lost": lost, "restarts": restarts(c), "not_graded": not_graded(c),
            "rows": host_rows(run)}


def restarts(c: dict[str, Any]) -> list[str]:
    """A line per restart (cluster/failover.py): a lost host's instances on a survivor, a
    recovered host's own, with the time from the loss to their first IO again."""
    out = []
    for r in c.get("failover") or []:
        if "why" in r:  # a restart that could not be made
            out.append(f"not restarted: {r['from']}'s instances on {r['to']}: {r['why']}")
            continue
        what = ", ".join(r.get("instances") or []) or "no instance"
        where = f"on {r['host']}" if r["kind"] == "failover" else "rejoined on its host"
        first = r.get("first_io_s")
        line = (f"{'moved' if r['kind'] == 'failover' else 'returned'}: {what} {where} at "
                f"{r.get('restart_s')}s, first IO "
                + (f"at {first}s, {r['gap_s']} s after {r['from']}'s loss at "
                   f"{r.get('lost_at_s')}s" if first is not None and r.get("gap_s") is not None
                   else "never")
                + f"; {r.get('ios') or 0:,} IOs")
        if r.get("host_lost_s") is not None:
            line += f"; lost with {r['host']} at {r['host_lost_s']}s"
        if r.get("error"):
            line += f"; {r['error']}"
        elif r.get("stopped"):
            line += "; still running at the run's end: stopped"
        elif r.get("exit") not in (0, None) and r.get("host_lost_s") is None:
            line += f"; fio ended with status {r['exit']}"
        out.append(line)
    return out


def host_io(run_dir: Path, max_points: int = MAX_POINTS) -> dict[str, dict[str, Any]]:
    """host -> component -> metric -> [[t...], [v...]] from each host's `series` stream
    (hosts/<host>/; older runs: host_series.ndjson), downsampled: each host's own line in the
    report's per-host charts (a lost host's ends at its loss: it has no rows after it)."""
    cols: dict[str, dict[str, dict[str, Column]]] = {}
    for host, row in host_series_rows(run_dir):
        t, dt = row.get("t"), row.get("dt")
        if not isinstance(t, int | float) or (isinstance(dt, int | float) and dt < MIN_DT):
            continue  # fio's closing stub is no second (rundata.chart_series)
        c = cols.setdefault(host, {}).setdefault(
            str(row.get("c")), {k: Column() for k in ("t", *CHART_METRICS)})
        c["t"].append(t)
        for m in CHART_METRICS:
            c[m].append(row.get(m))
    out: dict[str, dict[str, Any]] = {}
    for host, comps in cols.items():
        out[host] = {}
        for comp, data in comps.items():
            out[host][comp] = {}
            for m in CHART_METRICS:
                xs, ys = envelope_xy(data["t"][:], data[m][:], max_points)
                out[host][comp][m] = [[round(x, 3) for x in xs], ys]
    return out


def host_series_rows(run_dir: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(host, row) of every host's series, host after host."""
    old = run_dir / "host_series.ndjson"
    if old.exists():
        yield from ((str(r.get("host")), r) for r in read_ndjson(old))
        return
    hosts = run_dir / "hosts"
    for d in sorted(hosts.iterdir()) if hosts.is_dir() and not hosts.is_symlink() else ():
        if d.is_symlink():  # a host directory linked from elsewhere is not this run's
            continue
        yield from ((d.name, r) for r in read_rows(d, "series"))


def print_cluster(console: Console, run: RunRecord, per_host: bool = True) -> None:
    c = cluster_of(run)
    if not c:
        return
    hosts = c.get("hosts") or {}
    lost = c.get("lost") or {}
    worst = c.get("worst_skew_ms")
    line = f"Cluster: {len(hosts)} hosts, {active(c)} active at the end"
    if worst is not None:
        line += f"; start skew worst {worst:.1f} ms"
    console.print(line)
    windows = [f"{host} {w} " + ", ".join(f"{a:g}-{b:g}s" for a, b in spans)
               for host, p in (c.get("placement") or {}).items()
               for w, spans in (p.get("windows") or {}).items()]
    if windows:  # staggered instances: each graded from its own start
        console.print("instances (load on the run's axis): " + "; ".join(windows))
    for t in c.get("thresholds") or []:
        mark = "[green]✓[/]" if t.get("passed") else "[red]✗[/]"
        observed = t.get("observed")
        console.print(f"{mark} {t['expr']}: {observed if observed is not None else '-'} "
                      f"{t.get('unit', 'ms')}"
                      + (f" ({t['note']})" if t.get("note") else ""))
    for host, v in lost.items():
        console.print(f"[yellow]host lost:[/] {host} at {v.get('t')}s in {v.get('phase')}: "
                      f"{v.get('reason')}")
    for host, why in ((c.get("due_time") or {}).get("errors") or {}).items():
        console.print(f"[yellow]p99 from due on {host}:[/] {why}")  # its agent failed
    for line in restarts(c):
        console.print(line)
    if not per_host:
        return
    rows = host_rows(run)
    t = Table(title="Hosts" + (" (each graded on its own)" if any(r["graded"] for r in rows)
                               else " (no threshold of their own: each_host.)"),
              title_justify="left", show_edge=False, pad_edge=False)
    due = any(r["due_p99_ms"] is not None for r in rows)
    cols = ("", "host", "IO/s", "worst p99", *(("p99 from due",) if due else ()), "late",
            "state", "failed")
    for col in cols:
        t.add_column(col, justify="right" if col in ("IO/s", "worst p99", "p99 from due",
                                                     "late") else "left")
    for r in rows:
        mark = "[dim]-[/]" if not r["graded"] else "[green]✓[/]" if r["passed"] else "[red]✗[/]"
        t.add_row(mark, r["host"],
                  f"{r['iops']:,.1f}", format_latency_ms(r["p99_ms"]),
                  *((format_latency_ms(r["due_p99_ms"]),) if due else ()),
                  "-" if r["late_ms"] is None else f"{r['late_ms']:+.1f} ms",
                  state(r),
                  "; ".join(f"{f['expr']}" + (f" ({f['note']})" if f.get("note") else "")
                            for f in r["failed"]))
    console.print(t)
    for host, skipped in not_graded(c).items():
        console.print(f"[yellow]not graded on {host}:[/] {'; '.join(skipped)}")

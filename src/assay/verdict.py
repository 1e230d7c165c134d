"""The end of a run: per-component statistics, latency from the due time, phases, thresholds
and advice, from the samples the run recorded. The same arithmetic grades a run that ended
early (interrupted, aborted), on the seconds it measured."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assay.metrics.advice import advise
from assay.metrics.coverage import Coverage, coverage
from assay.metrics.intended import component_intended
from assay.metrics.phases import PhaseReport, analyse
from assay.metrics.summary import ComponentInfo, Stats, aggregate_all
from assay.plan import LOCAL, Plan
from assay.thresholds.evaluate import Result, evaluate


@dataclass
class Verdict:
    stats: dict[str, Stats]
    results: list[Result]
    phases: PhaseReport
    warnings: list[str] = field(default_factory=list)
    hosts: dict[str, dict[str, float]] = field(default_factory=dict)
    coverage: Coverage = field(default_factory=lambda: Coverage(0.0, 0.0))

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def ungraded(self) -> None:
        """Too few of the measured seconds were graded: no threshold passes or fails."""
        for r in self.results:
            r.graded, r.passed = False, False

    def to_json(self) -> dict[str, Any]:
        graded = [r for r in self.results if r.graded]
        return {"stats": {k: v.to_json() for k, v in self.stats.items()},
                "thresholds": [r.to_json() for r in self.results],
                "hosts": self.hosts, **self.coverage.to_json(),
                "verdict": {"passed": sum(r.passed for r in graded),
                            "failed": sum(not r.passed for r in graded),
                            "not_graded": len(self.results) - len(graded)}}


def grade(plan: Plan, samples: Collection[dict[str, Any]], steps: Sequence[dict[str, Any]],
          logs: Sequence[Path], hosts: Iterable[dict[str, Any]] = (),
          due: Mapping[str, dict[str, float | None]] | None = None,
          integrity: dict[str, Any] | None = None, ended_early: bool = False) -> Verdict:
    """`samples` may be read back from disk (results/blocklog.StoredRows): each pass streams;
    `steps` are the timeline's step events; `logs` fio's per-IO latency logs; `hosts` the
    hosts' utilisation per second (hosts.ndjson rows); `due` latency from the due time per
    component (metrics/duetime.py); `integrity` run.json's integrity section
    (docs/integrity.md); a run that `ended_early` is measured up to its last sample."""
    start, end = plan.warmup, plan.total_seconds
    components = closed_loop(plan)
    stats = aggregate_all(components, samples, start, end)
    intended(plan, stats, logs, start, end)
    for name, figures in (due or {}).items():
        if name in stats:
            stats[name].intended = figures
    phase_report = analyse(components, samples, steps, start, end)
    host_stats = host_summary(hosts, start, end, plan.hosts)
    results = evaluate(plan.thresholds, components, stats, phase_report, host_stats,
                       integrity or {}) if samples else []
    series = ({"t": s["t"], "dt": s["dt"], "c": s["c"],
               "iops": s["ios"] / s["dt"] if s["dt"] else 0.0} for s in samples)
    ratios = {n: (w.data.compressibility, w.data.dedupe)
              for n, w in plan.resolved.workloads.items()}
    windows = {c.name: (max(start, c.start_s), min(end, c.end_s) if c.end_s else end)
               for c in plan.components}
    warnings = advise(stats, series, windows, ratios) if samples else []
    measured = coverage(components, samples, start, end, ended_early)
    return Verdict(stats, results, phase_report, warnings, host_stats, measured)


def closed_loop(plan: Plan) -> list[ComponentInfo]:
    """The plan's components, those with a target but no rate-limited job marked closed (a
    Jetstress-style run: achieved >= target, no pacing slack)."""
    jobs = plan.jobs
    out = []
    for c, spec in zip(plan.components, plan.specs, strict=True):
        limited = not spec.jobs or any(  # no jobs: a database paced by its own driver
            jobs[n].options.get("rate_iops") or jobs[n].options.get("rate")
            for n in spec.jobs if n in jobs)
        out.append(replace(c, closed=bool(c.target_iops) and not limited))
    return out


def host_summary(rows: Iterable[dict[str, Any]], start: float, end: float,
                 order: Sequence[str] = ()) -> dict[str, dict[str, float]]:
    """Per host over the measured window: the mean of each utilisation metric and, as
    `<metric>_max`, its largest 1 s value; network summed over the NICs, and per NIC. Hosts
    in `order` (the run's), this machine first, not in the order their rows came."""
    cols: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        t = row.get("t")
        if not isinstance(t, int | float) or not start < t <= end + 0.5:
            continue
        values = {k: float(v) for k, v in row.items()
                  if isinstance(v, int | float) and k != "t"}
        nets = [k for k in values if k.startswith("net.")]
        values["net_rx_mbps"] = sum(values[k] for k in nets if k.endswith(".rx_mbps"))
        values["net_tx_mbps"] = sum(values[k] for k in nets if k.endswith(".tx_mbps"))
        per = cols.setdefault(str(row.get("host") or "local"), {})
        for k, v in values.items():
            per.setdefault(k, []).append(v)
    rank = {h: i for i, h in enumerate([LOCAL, *order])}
    out: dict[str, dict[str, float]] = {}
    for name, metrics in sorted(cols.items(), key=lambda c: (rank.get(c[0], len(rank)), c[0])):
        out[name] = {"seconds": float(len(next(iter(metrics.values()), [])))}
        for k, vs in metrics.items():
            out[name][k] = round(sum(vs) / len(vs), 3)
            out[name][f"{k}_max"] = round(max(vs), 3)
    return out


def intended(plan: Plan, stats: dict[str, Stats], logs: Sequence[Path], start: float,
             end: float) -> None:
    """Latency from each IO's due time, for even-paced components whose jobs all left per-IO
    logs (recordings of runs from before metrics/duetime.py)."""
    jobs = plan.jobs
    for spec in plan.specs:
        if spec.component not in stats or not spec.jobs or not logs or any(
                jobs[n].options.get("rate_process") != "linear" for n in spec.jobs):
            continue
        # fio names the log <name>_lat.<job number>.log
        found = {n: next((p for p in logs if p.name.startswith(f"{n}_lat.")), None)
                 for n in spec.jobs}
        if any(p is None for p in found.values()):
            continue
        try:
            pairs = [(p, float(jobs[n].options["rate"] or 0)) for n, p in found.items()
                     if p is not None]
            # log times count from the job's own start (after any startdelay)
            lo = max(start, spec.start_s) - spec.start_s
            hi = (min(end, spec.end_s) if spec.end_s is not None else end) - spec.start_s
            stats[spec.component].intended = component_intended(pairs, lo, hi)
        except OSError:
            continue


def hosts_failure(cluster: dict[str, Any] | None) -> str:
    """Why a cluster run failed beyond its cluster thresholds: the hosts that failed theirs."""
    if not cluster:
        return ""
    parts = []
    for t in cluster.get("thresholds", []):
        if not t["passed"]:  # what was seen, or why nothing was
            said = t.get("note") if t.get("observed") is None else t["observed"]
            parts.append(f"{t['expr']} ({said})" if said not in (None, "") else t["expr"])
    for host, g in (cluster.get("graded") or {}).items():
        bad = [t["expr"] + (f" ({t['note']})" if t.get("note") else "")
               for t in g.get("thresholds", []) if not t["passed"]]
        if bad:
            parts.append(f"{host}: {'; '.join(bad[:2])}")
    return "; ".join(parts)


def cluster_thresholds(c: Any) -> list[dict[str, Any]]:
    """The thresholds a cluster section graded beside the merged series': each host's
    (`each_host.`) and the cluster's own (`start_skew`, a host back that did IO)."""
    if not isinstance(c, dict):
        return []
    extra = [t for g in (c.get("graded") or {}).values() for t in g.get("thresholds", [])]
    return extra + list(c.get("thresholds") or [])


def count_all(info: dict[str, Any]) -> None:
    """run.json's `verdict` counts every threshold graded: the merged series', each host's
    (`each_host.`) and the cluster's own (`start_skew`), so the summary, the report and
    `assay runs` say how many passed and failed of all of them."""
    if not isinstance(info.get("verdict"), dict):
        return
    extra = cluster_thresholds(info.get("cluster"))
    info["verdict"]["passed"] += sum(1 for t in extra if t.get("passed"))
    info["verdict"]["failed"] += sum(1 for t in extra if not t.get("passed"))

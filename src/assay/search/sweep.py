"""`assay sweep`: runs over a grid of parameter values, optionally repeated, or a load curve.

Each point (one combination of values, one repetition) is a trial stored in sweep.json as it
finishes; a resumed sweep skips the points already done. With repeats, repeats.json holds the
mean and 95 % confidence interval of every metric of every point.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.exitcodes import RunAborted, UserError
from assay.metrics import stats
from assay.plan import ScenarioFile
from assay.results.recordparts import MeanStdev, RepeatStats
from assay.results.rundir import RECORD, RunDir, read_record
from assay.scenario.overrides import Param, parse_value
from assay.search.limit import FINISHED, SearchInterrupted
from assay.search.store import SCHEMA_VERSION, Group, write_json
from assay.search.trials import TrialSettings, run_trial

METRICS = ("iops", "mbps", "lat_avg", "lat_p50", "lat_p95", "lat_p99", "lat_p999", "lat_max")
Overrides = list[tuple[Param, Any]]


def parse_sets(scn: ScenarioFile, sets: list[str]) -> list[tuple[Param, list[Any]]]:
    """`--set db.load.threads=1,2,4` → (param, [1, 2, 4]) for each --set."""
    out = []
    for s in sets:
        name, eq, values = s.partition("=")
        if not eq or not values.strip():
            raise UserError(f"--set {s}: give WORKLOAD.PARAM=v1,v2,... e.g. "
                            f"db.load.threads=1,2,4")
        param = scn.param(name)
        parsed = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
        if param.integer and any(isinstance(v, float) and not v.is_integer() for v in parsed):
            raise UserError(f"--set {s}: {param.text} takes whole numbers")
        out.append((param, parsed))
    return out


def grid(sets: list[tuple[Param, list[Any]]]) -> list[Overrides]:
    """Every combination, the first --set varying slowest."""
    if not sets:
        return [[]]
    return [list(zip([p for p, _ in sets], combo, strict=True))
            for combo in itertools.product(*[vs for _, vs in sets])]


def point_key(overrides: Overrides) -> dict[str, Any]:
    return {p.text: v for p, v in overrides}


@dataclass
class Sweep:
    scenario: ScenarioFile
    group: Group
    settings: TrialSettings
    console: Console
    duration: float | None = None
    on_trial: Callable[[dict[str, Any]], None] = field(default=lambda r: None)

    @property
    def trials(self) -> list[dict[str, Any]]:
        return self.group.record.setdefault("trials", [])

    def resume_cleanup(self) -> int:
        kept = [t for t in self.trials if t.get("status") in FINISHED]
        self.group.record.setdefault("abandoned", []).extend(
            t for t in self.trials if t.get("status") not in FINISHED)
        self.group.record["trials"] = kept
        return len(kept)

    def done(self, point: dict[str, Any], repeat: int) -> dict[str, Any] | None:
        for t in self.trials:
            if t["point"] == point and t["repeat"] == repeat:
                return t
        return None

    def run(self, points: list[Overrides], repeats: int, extra: list[dict[str, Any]] | None
            = None) -> None:
        """Run every point `repeats` times, skipping those stored already."""
        for i, overrides in enumerate(points):
            point = point_key(overrides)
            for r in range(repeats):
                if self.done(point, r) is None:
                    self.trial(overrides, r, **(extra[i] if extra else {}))

    def trial(self, overrides: Overrides, repeat: int, graded: bool = True,
              **extra: Any) -> dict[str, Any]:
        plan = self.scenario.plan(overrides, self.duration, graded)
        record: dict[str, Any] = {"point": point_key(overrides), "repeat": repeat, **extra,
                                  "status": "running", "started": time.time()}
        self.trials.append(record)
        self.group.save()
        record.update(run_trial(plan, self.settings, self.console))
        self.group.save()
        self.on_trial(record)
        if record["status"] in ("interrupted", "aborted"):
            self.group.record["status"] = record["status"]
            self.group.save()
            if record["status"] == "interrupted":
                raise SearchInterrupted()
            raise RunAborted(f"run {record['run_id']} aborted: {record['reason']}; resume "
                             f"with --resume {self.group.id}")
        return record

    def finish(self) -> None:
        self.group.record["status"] = "done"
        self.group.record["ended"] = time.time()
        self.group.save()


def repeat_groups(trials: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per point: its run ids and, per `component.metric`, the mean and 95 % CI."""
    by_point: dict[str, list[dict[str, Any]]] = {}
    order: list[dict[str, Any]] = []
    for t in trials:
        k = repr(sorted(t["point"].items()))
        if k not in by_point:
            by_point[k] = []
            order.append(t["point"])
        by_point[k].append(t)
    out = []
    for point in order:
        runs = by_point[repr(sorted(point.items()))]
        comps = sorted({c for t in runs for c in t.get("stats", {})})
        metrics = {}
        for c in comps:
            for m in METRICS:
                vals = [t["stats"][c][m] for t in runs
                        if t.get("stats", {}).get(c, {}).get(m) is not None]
                metrics[f"{c}.{m}"] = _rounded(stats.summarise(vals))
        out.append({"point": point, "runs": [t["run_id"] for t in runs],
                    "statuses": [t["status"] for t in runs], "n": len(runs),
                    "metrics": metrics})
    return out


def _rounded(s: dict[str, Any]) -> dict[str, Any]:
    def r(v: Any) -> Any:
        if isinstance(v, float):
            return round(v, 6)
        if isinstance(v, list):
            return [r(x) for x in v]
        return v
    return {k: r(v) for k, v in s.items()}


def write_repeats(group: Group, scenario: str) -> Path:
    path = group.path / "repeats.json"
    groups = repeat_groups(group.record["trials"])
    write_json(path, {"schema_version": SCHEMA_VERSION, "group": group.id,
                      "kind": group.record["kind"], "scenario": scenario,
                      "confidence": 0.95, "method": "Student t, two-sided, sample stdev",
                      "groups": groups})
    _stamp_runs(group.path.parents[1], group.id, groups)
    return path


def _stamp_runs(results_root: Path, group_id: str, groups: list[dict[str, Any]]) -> None:
    """Give every repeated run its point's statistics (run.json `repeat`), so that
    `assay compare` judges differences against run-to-run noise, not second-to-second."""
    for g in groups:
        stats: dict[str, dict[str, MeanStdev]] = {}
        for key, s in g["metrics"].items():
            component, metric = key.rsplit(".", 1)
            name = metric if metric in ("iops", "mbps") else f"{metric}_ms"  # run.json names
            stats.setdefault(component, {})[name] = MeanStdev(mean=s["mean"], stdev=s["stdev"])
        block = RepeatStats(group=group_id, n=g["n"], runs=g["runs"], stats=stats)
        for run_id in g["runs"]:
            run_dir = RunDir(results_root / run_id)
            if (run_dir.path / RECORD).exists():
                record = read_record(run_dir.path)
                record.repeat = block
                run_dir.write_record(record)

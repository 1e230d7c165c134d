"""One trial of a search or sweep: an ordinary run, linked to its group, summarised in a line.

A trial whose verdict is already certain stops early (RunOptions.stop_early): a measured second
that breaks a bound no later second can undo (a latency maximum, a fixed-rate component that
fell behind its schedule) ends the trial as failed (thresholds/live.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.engine import Engine, Outcome, RunOptions
from assay.plan import Plan
from assay.results.blocklog import read_rows
from assay.run_options import RunnerFactory
from assay.thresholds.evaluate import Result


def delivered(outcome: Outcome) -> float | None:
    """min(achieved / target) over fixed-rate components: how much of the asked rate came.

    Every second counts, warm-up included: an overloaded trial is stopped after a second or
    two of measurement, and the platform's capacity shows in the warm-up as well.
    """
    targets = {c: s.target_iops for c, s in outcome.stats.items() if s.target_iops}
    ios: dict[str, float] = dict.fromkeys(targets, 0.0)
    seconds: dict[str, float] = dict.fromkeys(targets, 0.0)
    try:
        for row in read_rows(outcome.run_dir, "series"):
            if row.get("c") in targets:
                ios[row["c"]] += row["ios"]
                seconds[row["c"]] += row["dt"]
    except (OSError, ValueError, KeyError):
        return None
    ratios = [ios[c] / seconds[c] / t for c, t in targets.items() if seconds[c] and t]
    return min(ratios) if ratios else None


def deciding(results: list[Result], passed: bool) -> Result | None:
    """The threshold that decided: the worst failure, or on a pass the one closest to its
    bound."""
    def margin(r: Result) -> float:
        if r.observed is None:
            return float("inf") if not r.passed else 0.0
        scale = abs(r.bound) or 1.0
        return abs(r.observed - r.bound) / scale

    pool = [r for r in results if r.passed == passed]
    if not pool:
        return None
    return max(pool, key=margin) if not passed else min(pool, key=margin)


@dataclass
class TrialSettings:
    results_root: Path
    parent: str
    keep: bool = False
    force: bool = False
    stop_early: bool = True
    target_path: str | None = None
    verbose: bool = False  # show each run's own output (prefill, progress, warnings)
    runner: RunnerFactory | None = None  # on hosts (--hosts): each trial a cluster run


def run_trial(plan: Plan, settings: TrialSettings, console: Console) -> dict[str, Any]:
    """Run `plan` as a trial and return its record (stored in the group's JSON)."""
    if settings.target_path:
        plan.scenario.target.path = settings.target_path
    t0 = time.monotonic()
    options = RunOptions(settings.results_root, keep=settings.keep, force=settings.force,
                         json_mode=True, parent=settings.parent,
                         stop_early=settings.stop_early)
    if settings.runner is not None:
        options.runner = settings.runner
    with open(os.devnull, "w", encoding="utf-8") as devnull:
        # the trial's line says what matters; run.json keeps the rest
        quiet = Console(file=devnull)
        outcome = Engine(plan, options, console if settings.verbose else quiet).execute()
    passed = outcome.status == "passed"
    d = deciding(outcome.results, passed)
    ratio = delivered(outcome)
    return {
        "run_id": outcome.run_dir.name,
        "status": outcome.status,
        "passed": passed,
        "reason": outcome.reason,
        "stopped_early": outcome.reason.startswith("stopped early"),
        "seconds": round(time.monotonic() - t0, 1),
        "delivered": None if ratio is None else round(ratio, 4),
        "deciding": None if d is None else {
            "expr": d.threshold.text, "component": d.component, "observed": d.observed,
            "bound": d.bound, "passed": d.passed, "note": d.note},
        "stats": {k: {**{m: v.metric(m) for m in ("iops", "mbps", "lat_avg", "lat_p50",
                                                  "lat_p95", "lat_p99", "lat_p999", "lat_max",
                                                  "behind")}, "target": v.target_iops}
                  for k, v in outcome.stats.items()},
    }


@contextmanager
def shared_target(plan: Plan, given: str | None) -> Iterator[str | None]:
    """One scratch directory for all trials of a group on a temporary target, so the dataset
    is written once and reused (prefill is skipped while it is unchanged); removed at the end.
    A target the user named (scenario `target.path` or --path), and each host's own on a
    cluster run, is used as is."""
    target = plan.scenario.target
    if given or plan.cluster is not None or target.path or target.device \
            or target.platform != "local":
        yield given
        return
    path = tempfile.mkdtemp(prefix="assay-group-", dir=os.environ.get("ASSAY_TMPDIR"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)  # we created it: everything in it is ours

"""Scenario text → plan: streams, fio jobs, graded components, thresholds, job files.

Everything that can be checked without IO is checked here, and every problem comes back at
once with file:line: a bad key, a bad unit, a threshold that names no component, a host this
version cannot reach.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from assay import actions as action_registry
from assay import workloads
from assay.fio.jobfile import fio_seconds
from assay.integrity.check import check as check_integrity
from assay.metrics.intended import MAX_LOGGED_IOS
from assay.metrics.summary import ComponentInfo
from assay.plan.model import Plan, render_jobfiles
from assay.plan.sources import read_scenario
from assay.plan.steps import check_steps
from assay.scenario.loader import load_text
from assay.scenario.models import ResolvedScenario, Target
from assay.scenario.units import format_duration
from assay.scenario.yamlsource import Issue, ScenarioInvalid
from assay.thresholds.evaluate import expand, resolve
from assay.thresholds.grammar import Threshold, ThresholdError
from assay.thresholds.presets import jetstress_for
from assay.workloads.base import BuildContext, Stream

# Adjusts the validated target before the job files are rendered (--path, --lab)
TargetEdit = Callable[[Target], None]


LOCAL_NAMES = {"local", "localhost", "127.0.0.1", "::1"}


def is_local(host: str) -> bool:
    """A workload's `host:` means this machine: asked of the system (getfqdn may wait on
    DNS) only for a name that is not one of the usual ones, since every plan checks it."""
    if host in LOCAL_NAMES:
        return True
    with contextlib.suppress(OSError):
        return host in (socket.gethostname(), socket.getfqdn())
    return False


def load(ref: str, duration: float | None = None, warmup: float | None = None,
         target: TargetEdit | None = None) -> Plan:
    """Read, validate and plan a scenario (built-in name or file)."""
    text, display, base = read_scenario(ref)
    return plan_text(text, display, base, duration, warmup, target)


def plan_text(text: str, file: str, base_dir: Path | None = None,
              duration: float | None = None, warmup: float | None = None,
              target: TargetEdit | None = None) -> Plan:
    """Plan scenario text; `duration` and `warmup` (seconds) override the timeline's."""
    resolved = load_text(text, file, workloads.kinds(), action_registry.actions())
    sc = resolved.scenario
    if warmup is not None:
        sc.timeline.warmup = warmup
    if target is not None:
        target(sc.target)
    run_seconds = duration if duration is not None else sc.timeline.duration
    ctx = BuildContext(seed=sc.seed, duration=run_seconds, warmup=sc.timeline.warmup,
                       duration_overridden=duration is not None)
    streams: list[Stream] = []
    issues: list[Issue] = []
    src = resolved.source
    for name, params in resolved.workloads.items():
        if not is_local(params.host):
            issues.append(src.issue(("workloads", name, "host"), f"{params.host!r} is not this "
                                    f"machine, and runs across hosts are not supported yet: "
                                    f"remove `host` to run here"))
        if params.kind == "fio":
            params = params.model_copy(update={"base_dir": str(base_dir or Path.cwd())})
        module = workloads.kind_module(params.kind)
        try:
            built = module.build(name, params, ctx)
            if params.subdir:
                in_subdir(built, params.subdir)
            if params.start or params.stop is not None:
                if params.stop is not None and params.stop > run_seconds:
                    issues.append(src.issue(("workloads", name, "stop"),
                                            f"after the end of the run "
                                            f"({format_duration(run_seconds)} measured)"))
                in_window(built, sc.timeline.warmup, params.start, params.stop, run_seconds)
            streams.extend(built)
        except ValueError as e:
            issues.append(src.issue(("workloads", name), str(e)))
        if params.kind == "micro":
            run_seconds = max(run_seconds, module.duration(params, ctx))
    components = [ComponentInfo(c.component, c.target_iops) for s in streams
                  for c in s.components]
    thresholds = _thresholds(resolved, components, issues, sc.timeline.warmup + run_seconds)
    issues.extend(check_steps(resolved, thresholds, run_seconds, ctx.notes))
    issues.extend(check_integrity(resolved, streams, thresholds))
    if issues:
        raise ScenarioInvalid(issues)
    plan = Plan(resolved, streams, thresholds, run_seconds, sc.timeline.warmup, ctx.notes,
                intended_note=log_due_times(streams, sc.timeline.warmup + run_seconds))
    return replace(plan, jobfiles=render_jobfiles(plan))


def log_due_times(streams: list[Stream], seconds: float) -> str:
    """Ask fio for per-IO logs of even-paced jobs, when they fit in its memory: latency from
    each IO's due time is rebuilt from them (metrics/intended.py). Returns what was decided."""
    even = [j for s in streams for j in s.jobs
            if j.options.get("rate_process") == "linear" and j.options.get("rate")]
    if not even:
        return "not computed: no even-paced fixed-rate component"
    due = sum(c.target_iops or 0 for s in streams for c in s.components if not c.poisson)
    if due * seconds > MAX_LOGGED_IOS:
        return (f"not computed: over {MAX_LOGGED_IOS:,} IOs would be logged; the schedule-lag "
                f"check applies")
    for job in even:
        job.options["write_lat_log"] = job.name
    return "from fio's per-IO logs of even-paced jobs"


def in_window(streams: list[Stream], warmup: float, start: float, stop: float | None,
              duration: float) -> None:
    """A workload that arrives or leaves during the run: fio's `startdelay` and `runtime`
    per job, and the components' windows (their schedule and statistics start with them)."""
    begin = warmup + start if start else 0.0  # starting with the run includes the warm-up
    end = warmup + (stop if stop is not None else duration)
    for s in streams:
        for job in s.jobs:
            if begin:
                job.options["startdelay"] = fio_seconds(begin)
            job.options["runtime"] = fio_seconds(end - begin)
        for c in s.components:
            c.start_s, c.end_s = begin, (end if stop is not None else None)


def in_subdir(streams: list[Stream], subdir: str) -> None:
    """A workload's files go to `subdir/` of the target (e.g. its own btrfs subvolume)."""
    for s in streams:
        for f in s.files:
            f.name = f"{subdir}/{f.name}"
        for job in s.jobs:
            if "filename" in job.options:
                names = str(job.options["filename"]).split(":")
                job.options["filename"] = ":".join(f"{subdir}/{n}" for n in names)


def _thresholds(resolved: ResolvedScenario, components: list[ComponentInfo],
                issues: list[Issue], seconds: float) -> list[Threshold]:
    spec = resolved.scenario.thresholds
    src = resolved.source
    entries = (list(spec.items()) if isinstance(spec, dict)
               else [(i, e) for i, e in enumerate(spec)])
    out: list[Threshold] = []
    for key, value in entries:
        if isinstance(value, str) and value.strip() == "jetstress":  # strict, or stress-run
            value = jetstress_for(seconds)  # lenient, as Jetstress picks by the run's length
        try:
            parsed = expand({key: str(value)} if isinstance(key, str) else [value])
            for t in parsed:
                resolve(t, components)
            out.extend(parsed)
        except ThresholdError as e:
            issues.append(src.issue(("thresholds", key), str(e)))
    return out

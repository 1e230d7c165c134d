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
from typing import Any

from assay import actions as action_registry
from assay import workloads
from assay.fio.jobfile import fio_seconds
from assay.hosts.inventory import Host, fio_path_problem
from assay.hosts.selection import PlacementError, one_host
from assay.integrity.check import check as check_integrity
from assay.integrity.check import writing
from assay.integrity.fiojobs import apply as add_headers
from assay.integrity.session import settings as integrity_settings
from assay.metrics.duetime import IOLOG_SUFFIX
from assay.metrics.pacedjobs import paced_jobs
from assay.metrics.summary import ComponentInfo
from assay.plan import failover, pacing
from assay.plan.instances import in_subdir
from assay.plan.limits import check as check_rates
from assay.plan.model import Plan, device_problem, render_jobfiles
from assay.plan.placement import place
from assay.plan.sources import read_scenario
from assay.plan.steps import check_steps
from assay.platforms import platformstate
from assay.postgres.checks import check as check_postgres
from assay.scenario.loader import load_text
from assay.scenario.models import ResolvedScenario, Target
from assay.scenario.units import format_duration
from assay.scenario.yamlsource import Issue, ScenarioInvalid
from assay.thresholds.evaluate import expand, resolve
from assay.thresholds.grammar import Threshold, ThresholdError
from assay.thresholds.presets import jetstress_for
from assay.workloads.base import BuildContext, Stream

# what a cluster-only scenario planned without an inventory is told, once per place
GIVE_HOSTS = ("give --hosts FILE (an Ansible inventory; `assay lab create cluster --hosts 3` "
              "makes one on this machine)")

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
         target: TargetEdit | None = None, hosts: list[Host] | None = None) -> Plan:
    """Read, validate and plan a scenario (built-in name or file); with `hosts` (an
    inventory) the workloads are placed on them (plan/placement.py)."""
    text, display, base = read_scenario(ref)
    return plan_text(text, display, base, duration, warmup, target, hosts)


def plan_text(text: str, file: str, base_dir: Path | None = None,
              duration: float | None = None, warmup: float | None = None,
              target: TargetEdit | None = None, hosts: list[Host] | None = None) -> Plan:
    """Plan scenario text; `duration` and `warmup` (seconds) override the timeline's."""
    resolved = load_text(text, file, workloads.kinds(), action_registry.actions())
    sc = resolved.scenario
    if warmup is not None:
        sc.timeline.warmup = warmup
    if target is not None:
        target(sc.target)
    issues: list[Issue] = []
    src = resolved.source
    if sc.target.path and (problem := fio_path_problem(sc.target.path)):
        issues.append(src.issue(("target", "path"), problem))  # --path: before any directory
    run_seconds = duration if duration is not None else sc.timeline.duration
    ctx = BuildContext(seed=sc.seed, duration=run_seconds, warmup=sc.timeline.warmup,
                       duration_overridden=duration is not None)
    streams: list[Stream] = []
    for name, params in resolved.workloads.items():
        if hosts is None and params.hosts is not None:
            issues.append(src.issue(("workloads", name, "hosts"), "placement on hosts needs an "
                                    f"inventory: {GIVE_HOSTS}"))
        if hosts is None and not is_local(params.host):
            issues.append(src.issue(("workloads", name, "host"), f"{params.host!r} is not this "
                                    f"machine: to run across hosts, {GIVE_HOSTS}; or remove "
                                    f"`host` to run here"))
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
    components = [ComponentInfo(c.component, c.target_iops, training=c.training)
                  for s in streams for c in s.components]
    thresholds = _thresholds(resolved, components, issues, sc.timeline.warmup + run_seconds)
    host_thresholds = _thresholds(resolved, components, issues,
                                  sc.timeline.warmup + run_seconds, each_host=True)
    entries = sc.thresholds.items() if isinstance(sc.thresholds, dict) \
        else enumerate(sc.thresholds)
    if hosts is None and any(host_level(k, v)[2] is None for k, v in entries):
        issues.append(src.issue(("thresholds",), f"start_skew and platform.* grade a cluster "
                                                 f"run: {GIVE_HOSTS}"))
    try:
        platformstate.entries(sc.thresholds)
    except ValueError as e:
        issues.append(src.issue(("thresholds",), str(e)))
    for i, step in enumerate(resolved.steps):
        if step.action in ("host_fail", "host_recover"):
            down = str(getattr(step, "host", ""))
            picked = one_host(down, hosts) if hosts is not None else None
            if picked is None:
                issues.append(src.issue(("timeline", "steps", i, "host"),
                                        f"{step.action} needs one host of the inventory (a name "
                                        f"or an index): {down!r} is not one"
                                        if hosts is not None else
                                        f"{step.action} needs a cluster run: {GIVE_HOSTS}"))
    if host_thresholds and hosts is None:
        issues.append(src.issue(("thresholds",),
                                f"each_host thresholds need an inventory: {GIVE_HOSTS}"))
    # a cluster run's detected host losses are timeline events too: `after host_lost`
    timed = [t for t in thresholds + host_thresholds
             if hosts is None or t.phase_step != "host_lost"]
    issues.extend(check_steps(resolved, timed, run_seconds, ctx.notes))
    issues.extend(check_postgres(resolved))
    issues.extend(check_integrity(resolved, streams, thresholds, hosts is not None))
    issues.extend(check_rates(resolved, streams))
    issues.extend(failover.check(resolved, hosts))
    if sc.target.device and (unfit := device_problem(streams)):
        issues.append(src.issue(("target", "device"), f"workload {unfit[0]}: {unfit[1]}, "
                                f"which only a filesystem holds: give a `path`"))
    if issues:
        raise ScenarioInvalid(issues)
    _, verified = integrity_settings(resolved, writing(streams))
    ctx.notes.extend(add_headers(streams, verified,
                                 {n: w.kind for n, w in resolved.workloads.items()}))
    plan = Plan(resolved, streams, thresholds, run_seconds, sc.timeline.warmup, ctx.notes,
                intended_note=log_due_times(streams, sc.timeline.warmup + run_seconds),
                host_thresholds=host_thresholds, warnings=pacing.warnings(streams))
    if hosts is None:
        return replace(plan, jobfiles=render_jobfiles(plan))
    try:
        plan, jobfiles = place(plan, hosts)
    except PlacementError as e:
        field = "failover" if str(e).startswith("failover") else "hosts"
        where = ("workloads", e.workload, field) if e.workload else ("thresholds",)
        raise ScenarioInvalid([src.issue(where, str(e))]) from None
    return replace(plan, jobfiles=jobfiles)


def log_due_times(streams: list[Stream], seconds: float) -> str:
    """Ask fio for the issue log of every fixed-rate job: assay reads it as fio writes it,
    freeing what it has read, and rebuilds each IO's due time (metrics/duetime.py). Returns
    what was decided."""
    jobs = {j.name: j for s in streams for j in s.jobs}
    paced = paced_jobs({n: j.options for n, j in jobs.items()})
    if not paced:
        return "not computed: no fixed-rate component"
    for name in paced:
        jobs[name].options["write_iolog"] = f"{name}{IOLOG_SUFFIX}"
    note = "from fio's issue logs, read as fio writes them, and each IO's due time from its " \
           "job's even or Poisson schedule"
    # assay's own workloads pace one direction per job; a user's fio job may not
    unpaced = [n for n, j in jobs.items() if n not in paced
               and (j.options.get("rate") or j.options.get("rate_iops"))]
    if unpaced:
        note += f"; not for {', '.join(unpaced)}: a fixed rate that is not one even or " \
                "Poisson schedule (reads and writes in one job, numjobs, a rate per direction)"
    return note


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


def _thresholds(resolved: ResolvedScenario, components: list[ComponentInfo],
                issues: list[Issue], seconds: float, each_host: bool = False) -> list[Threshold]:
    """The cluster's (and a single host's) thresholds, or with `each_host` those written
    `each_host.SELECTOR` that every host of a cluster must meet on its own."""
    spec = resolved.scenario.thresholds
    src = resolved.source
    entries = (list(spec.items()) if isinstance(spec, dict)
               else [(i, e) for i, e in enumerate(spec)])
    out: list[Threshold] = []
    for key, value in entries:
        path_key = key
        key, value, per_host = host_level(key, value)
        if per_host != each_host:
            continue
        if isinstance(value, str) and value.strip() == "jetstress":  # strict, or stress-run
            value = jetstress_for(seconds)  # lenient, as Jetstress picks by the run's length
        try:
            parsed = expand({key: str(value)} if isinstance(key, str) else [value])
            for t in parsed:
                resolve(t, components)
            out.extend(parsed)
        except ThresholdError as e:
            issues.append(src.issue(("thresholds", path_key), str(e)))
    return out


def host_level(key: str | int, value: Any) -> tuple[str | int, Any, bool | None]:
    """`each_host.X: v` / "each_host.X ..." -> (X, v, True); `cluster.` prefixes drop;
    `start_skew` (graded by the cluster run itself, plan/placement.py) -> None."""
    if key == "start_skew" or isinstance(value, str) and value.lstrip().startswith(
            "start_skew") or platformstate.is_platform(key, value):  # graded by the cluster
        return key, value, None
    for prefix, per_host in (("each_host.", True), ("cluster.", False)):
        if isinstance(key, str) and key.startswith(prefix):
            return key[len(prefix):], value, per_host
        if isinstance(key, int) and isinstance(value, str) and \
                value.lstrip().startswith(prefix):
            return key, value.lstrip()[len(prefix):], per_host
    return key, value, False

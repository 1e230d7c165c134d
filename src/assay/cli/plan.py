"""`assay plan`: the resolved timeline and the exact fio jobs, checked by fio, without IO."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import click
from rich.console import Console

from assay.cli.common import duration_value, scenario_error
from assay.cli.placement import Placement
from assay.cli.plan_hosts import participants
from assay.cli.run import planned
from assay.console import make_console
from assay.exitcodes import UserError
from assay.fio.jobfile import FioJob
from assay.fio.parsecheck import check_texts
from assay.hosts import inventory
from assay.integrity.check import describe as integrity_line
from assay.plan import RUN_JOB, Plan
from assay.plan.build import GIVE_HOSTS
from assay.plan.model import DIRECT_VAR, TARGET_VAR
from assay.plan.tally import Tally, tally
from assay.platforms import platformstate
from assay.scenario.units import format_duration, format_size
from assay.scenario.yamlsource import ScenarioInvalid
from assay.thresholds.evaluate import resolve
from assay.thresholds.grammar import Threshold


def fio_check(plan: Plan, pool: int | None = None) -> str | None:
    """fio's own check of every job file, with its variables set to a scratch directory: each
    distinct text once, several fios at once (fio/parsecheck.py). Each complaint names the
    host and the file, and the others fio refused for the same reason."""
    where = [(f"{host}/{name}", text) for host, files in plan.jobfiles.items()
             for name, text in files.items()]
    with tempfile.TemporaryDirectory(prefix="assay-plan-") as tmp:
        complaints = check_texts([t for _, t in where], [w for w, _ in where],
                                 {TARGET_VAR: tmp, DIRECT_VAR: "1"}, pool)
    refused: dict[str, list[str]] = {}
    for (file, _), complaint in zip(where, complaints, strict=True):
        if complaint:
            refused.setdefault(complaint, []).append(file)
    return "\n".join(f"{_some(files)}: {complaint}" for complaint, files in refused.items()) \
        or None


def _some(files: list[str], shown: int = 3) -> str:
    """`n1/run.fio`, or `n1/run.fio, n2/run.fio, n3/run.fio and 509 more`."""
    more = f" and {len(files) - shown} more" if len(files) > shown else ""
    return ", ".join(files[:shown]) + more


def _graded_on(t: Threshold, plan: Plan) -> str:
    """`  (preset rate; on db.data.read, db.log.write)`: where one line is graded more than
    once, so the count above adds up."""
    on = [c.name for c in resolve(t, plan.components)] if not (t.host or t.integrity) else []
    said = [x for x in (t.source, f"on {', '.join(on)}" if len(on) > 1 else "") if x]
    return f"  ({'; '.join(said)})" if said else ""


def _tally_json(graded: Tally) -> dict[str, object]:
    return {"total": graded.total, "merged": graded.merged, "each_host": graded.hosts,
            "cluster": graded.cluster}


def _component(plan: Plan, every_job: dict[str, FioJob], name: str, target: float | None) -> str:
    """How a component is loaded: its rate and pacing, or closed loop; its window.
    `every_job` is plan.jobs, built once by the caller: the property builds it anew, and
    once per job made the plan quadratic in its jobs."""
    spec = next(c for c in plan.specs if c.component == name)
    if not spec.jobs:  # a database's transactions (postgres): pgbench, not fio
        what = {"commit": "transactions", "failed": "failed or skipped transactions",
                "lag": "schedule lag of each transaction"}.get(spec.direction, spec.direction)
        rate = f" at {target:,.1f} tx/s, Poisson arrivals" if target else ""
        return f"pgbench: {what}{rate}"
    jobs = [every_job[j] for j in spec.jobs if j in every_job]
    limited = any(j.options.get("rate_iops") or j.options.get("rate") for j in jobs)
    depth = sum(int(str(j.options.get("iodepth") or 1)) * int(str(j.options.get("numjobs") or 1))
                for j in jobs)
    stream = name.split(".")[1]
    if target and limited:
        text = f"{target:,.1f} IO/s, {'Poisson' if spec.poisson else 'even'} arrivals"
    elif target:
        text = f"closed loop, graded against {target:,.1f} IO/s"
    elif stream.rstrip("0123456789") != stream:
        text = f"one instance of {stream.rstrip('0123456789')}, graded on its own"
    else:
        text = "closed loop"
    peak = max((v or 0.0 for _, v in spec.target_steps), default=0.0)
    if target and limited and peak > target:  # a cluster's staggered instances
        text += f" from {format_duration(spec.start_s)}, up to {peak:,.1f} as the staggered " \
                f"instances start and end"
    text += f", {len(jobs)} jobs, {depth} outstanding"
    if spec.start_s or spec.end_s is not None:
        end = format_duration(spec.end_s) if spec.end_s is not None else "the end"
        text += f", {format_duration(spec.start_s)}-{end}"
    return text


def _other_jobfiles(con: Console, plan: Plan, host: str) -> None:
    """The job files a run stores beside run.fio (the prefill that writes the dataset)."""
    for name, text in plan.jobfiles[host].items():
        if name != RUN_JOB and text.strip():
            con.rule(f"fio job file: hosts/{host}/{name}")
            click.echo(text)


def _plan_here(plan_on: Callable[[list[inventory.Host] | None], Plan]) -> Plan:
    """The plan without an inventory; a cluster scenario, otherwise valid, is shown on example
    hosts that exist nowhere (a run still needs real ones)."""
    try:
        return plan_on(None)
    except ScenarioInvalid as e:
        if not all(GIVE_HOSTS in i.message for i in e.issues):
            raise
    plan = plan_on(inventory.example())
    plan.notes.append(f"planned on an example inventory (n1, n2, n3, each at /mnt/assay), not "
                      f"contacted; to run it, {GIVE_HOSTS}")
    return plan


@click.command("plan")
@click.argument("scenario")
@click.option("--duration", help="Measured time, overriding the scenario's (e.g. 60s).")
@click.option("--warmup", help="Warm-up, overriding the scenario's (e.g. 0, 30s).")
@click.option("--set", "sets", multiple=True, metavar="WORKLOAD.PARAM=VALUE",
              help="Override a workload parameter, as `assay run --set` does (repeatable).")
@click.option("--cache", metavar="SIZE", help="HCIBench workloads: the platform's total cache, "
              "as `assay run --cache`.")
@click.option("--ftt", type=click.IntRange(0, 3), help="HCIBench workloads: failures to "
              "tolerate, as `assay run --ftt`.")
@click.option("--hosts", "hosts_file", type=click.Path(dir_okay=False, exists=True,
                                                     path_type=Path),
              help="Ansible inventory: place the workloads on its hosts and show each host's "
                   "job files (no host is contacted).")
@click.option("--lab", "lab_name", help="Plan for lab NAME as `assay run --lab` runs on it: a "
              "lab platform's target, or a lab cluster's hosts.")
@click.option("--json", "json_mode", is_flag=True, help="Print the plan as JSON.")
@click.option("--fio", "fio_only", is_flag=True,
              help="Print only the job file a run writes (hosts/local/run.fio, or the first "
                   "host's with --hosts), byte for byte.")
@click.option("--no-check", is_flag=True, help="Skip `fio --parse-only` (no fio needed).")
def command(scenario: str, duration: str | None, warmup: str | None, sets: tuple[str, ...],
            cache: str | None, ftt: int | None, hosts_file: Path | None, lab_name: str | None,
            json_mode: bool, fio_only: bool, no_check: bool) -> None:
    """Validate SCENARIO and print what a run would do, without doing any IO.

    The job files shown are the ones a run stores in its directory, byte for byte; they read
    the target directory and O_DIRECT from ${ASSAY_TARGET} and ${ASSAY_DIRECT}.
    """
    placement = Placement.read(hosts_file, lab_name, target_path=None, accept_new=False)

    def plan_on(hosts: list[inventory.Host] | None) -> Plan:
        return planned(scenario, sets, duration_value(duration),
                       duration_value(warmup, "--warmup", allow_zero=True), placement.target,
                       cache=cache, ftt=ftt, hosts=hosts)

    try:
        plan = plan_on(placement.hosts) if placement.hosts else _plan_here(plan_on)
    except ScenarioInvalid as e:
        raise scenario_error(e) from None
    first = plan.hosts[0]
    jobfile = plan.jobfile(first)
    if fio_only:
        click.echo(jobfile, nl=False)
        return
    complaint = None if no_check else fio_check(plan)
    if json_mode:
        click.echo(json.dumps({
            "scenario": plan.name, "duration_s": plan.duration, "warmup_s": plan.warmup,
            "dataset_bytes": plan.dataset_bytes,
            "components": [{"name": c.name, "target_iops": c.target_iops}
                           for c in plan.components],
            "steps": [s.model_dump(mode="json") for s in plan.resolved.steps],
            "thresholds": [t.text for t in plan.thresholds],
            "thresholds_graded": _tally_json(tally(plan)),
            "integrity": integrity_line(plan.resolved, plan.streams, plan.cluster is not None),
            "fio_check": None if no_check else (complaint or "ok"),
            "jobfile": jobfile, "jobfiles": plan.jobfiles,
            "hosts": {h: {**v, "participants": participants(plan, h)}  # type: ignore[dict-item]
                      for h, v in plan.cluster.to_json().items()} if plan.cluster else None,
            "notes": plan.notes, "warnings": plan.warnings}, indent=2))
    else:
        con = make_console()
        con.print(f"[bold]{plan.name}[/]  {plan.scenario.description}")
        con.print(f"timeline: 0s-{format_duration(plan.warmup)} warm-up (not graded), "
                  f"{format_duration(plan.warmup)}-{format_duration(plan.total_seconds)} "
                  f"measured" + (f", ending {plan.scenario.timeline.end} if that comes first"
                                 if plan.scenario.timeline.end else ""))
        for i, step in enumerate(plan.resolved.steps):
            when = (f"at {format_duration(step.at or 0)}" if step.after is None
                    else f"after {step.after}")
            if step.every:
                when += f", every {format_duration(step.every)}"
                when += f" x{step.count}" if step.count else " until the end"
            con.print(f"  step {i + 1}: {step.action} {when}")
        con.print(f"dataset: {format_size(plan.dataset_bytes)} in {plan.file_count} files"
                  if plan.file_count else "dataset: no fio file (a database loads its own)")
        on_hosts = plan.cluster is not None
        con.print(f"integrity: {integrity_line(plan.resolved, plan.streams, on_hosts)}")
        con.print("streams:")
        for st in plan.streams:
            con.print(f"  {st.key:<20} {len(st.jobs)} fio jobs, {len(st.files)} files: "
                      f"{st.description}")
        con.print("components:" if not on_hosts else
                  "components (every instance's rate added up; jobs and depth are one "
                  "instance's):")
        every_job = plan.jobs
        for c in plan.components:
            con.print(f"  {c.name:<24} {_component(plan, every_job, c.name, c.target_iops)}")
        graded = tally(plan)
        con.print("thresholds:" + (f" {graded.describe()}" if graded.total else ""))
        for t in plan.thresholds:
            con.print(f"  {t.text}{_graded_on(t, plan)}")
        platform_graded = platformstate.entries(plan.scenario.thresholds)
        if not plan.thresholds and not plan.host_thresholds and not platform_graded:
            con.print("  none: the run will not be graded")
        if plan.cluster is not None:
            for t in plan.host_thresholds:
                con.print(f"  each host: {t.text}")
            for metric, op, bound in platform_graded:
                con.print(f"  platform: {metric} {op} {bound:g}s "
                          f"({platformstate.METRICS[metric]})")
            if plan.cluster.skew_limit_ms is not None:
                con.print(f"  start skew < {plan.cluster.skew_limit_ms:g}ms")
            con.print(f"hosts: {len(plan.cluster.hosts)}, started together at one instant "
                      f"(the dataset above is one instance's)")
            for host, hp in plan.cluster.hosts.items():
                size = format_size(sum(n for _, n in hp.files))
                counts = ", ".join(f"{w} x{n}" for w, n in hp.instances.items())
                con.print(f"  {host:<12} {counts:<16} {size:>9} in {hp.host.target}")
                for p in participants(plan, host):  # what runs there, fio and beside it
                    con.print(f"    {p['name']}: {p['detail']}")
        for note in plan.notes:
            con.print(f"[yellow]note:[/] {note}")
        for text in plan.warnings:
            con.print(f"[yellow]warning:[/] {text}")
        if plan.cluster is None:
            con.rule(f"fio job file: hosts/local/{RUN_JOB}")
            click.echo(jobfile)
            _other_jobfiles(con, plan, first)
        for host, hp in (plan.cluster.hosts.items() if plan.cluster else []):
            counts = ", ".join(f"{w} x{n}" for w, n in hp.instances.items())
            con.rule(f"fio job file: hosts/{host}/{RUN_JOB}  ({counts}; target "
                     f"{hp.host.path or hp.host.device})")
            click.echo(plan.jobfiles[host][RUN_JOB])
            _other_jobfiles(con, plan, host)
        if not no_check:
            con.print("fio --parse-only: " + ("[green]ok[/]" if not complaint else
                                               f"[red]{complaint}[/]"))
    if complaint:
        raise UserError(f"fio rejected the generated job file: {complaint}")

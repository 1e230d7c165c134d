"""`assay run`: run a scenario, grade it, keep the result."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from assay import leftovers
from assay.cli.common import (
    duration_value,
    hosts_options,
    results_option,
    results_root,
    scenario_error,
)
from assay.cli.placement import Placement
from assay.console import make_console
from assay.engine import Engine, RunOptions
from assay.exitcodes import UserError
from assay.hosts.inventory import Host
from assay.observe.server import serving
from assay.plan import Plan, ScenarioFile, TargetEdit
from assay.plan.tally import tally
from assay.platforms import cephtarget
from assay.report.jsondoc import summary_document
from assay.report.terminal import print_summary
from assay.results.record import RecordError
from assay.results.rundir import read_record
from assay.run_options import RunnerFactory
from assay.runners import LocalRunner
from assay.runners.ssh import ssh_runner
from assay.scenario.units import format_duration, format_size
from assay.scenario.yamlsource import ScenarioInvalid


def banner(console: Console, plan: Plan, target: str) -> None:
    console.print(f"[bold]assay[/] {plan.name}: {plan.scenario.description}".rstrip(": "))
    console.print(f"  target   {target}")
    console.print(f"  timeline {format_duration(plan.warmup)} warm-up, "
                  f"{format_duration(plan.duration)} measured"
                  + (f", {len(plan.resolved.steps)} timeline steps" if plan.resolved.steps
                     else ""))
    for s in plan.streams:
        targets = [c.target_iops for c in s.components if c.target_iops]
        rate = f"{sum(targets):,.1f} IO/s" if targets else "as fast as it goes"
        size = format_size(sum(f.size for f in s.files))
        console.print(f"  {s.key:<16} {rate:>18}  {size:>8}  {s.description}")
    graded = tally(plan)
    if graded.total:  # the count the live line and the summary end with
        console.print(f"  thresholds {graded.describe()}")
    for text in plan.warnings:
        console.print(f"[yellow]warning:[/] {text}")


def planned(scenario: str, sets: tuple[str, ...], duration: float | None,
            warmup: float | None, target: TargetEdit | None = None,
            cache: str | None = None, ftt: int | None = None,
            hosts: list[Host] | None = None) -> Plan:
    """The scenario's plan, with any `--set WORKLOAD.PARAM=VALUE` and target changes applied
    before its job files are rendered; placed on the inventory's `hosts` when given."""
    scn = ScenarioFile.read(scenario)
    if target is None and hosts is not None:  # a ceph scenario's cluster, from the inventory
        target = cephtarget.from_inventory(hosts)
    return scn.plan(scn.overrides(sets + hcibench_sets(scn, cache, ftt)), duration,
                    warmup=warmup, target=target, hosts=hosts)


def hcibench_sets(scn: ScenarioFile, cache: str | None, ftt: int | None) -> tuple[str, ...]:
    """--cache and --ftt as `--set` on every HCIBench workload (its working-set rule)."""
    if cache is None and ftt is None:
        return ()
    data = scn.source.data if isinstance(scn.source.data, dict) else {}
    names = [n for n, w in (data.get("workloads") or {}).items()
             if isinstance(w, dict) and w.get("kind") == "hcibench"]
    if not names:
        raise UserError("--cache and --ftt size HCIBench workloads (kind: hcibench), and this "
                        "scenario has none; e.g. `assay run hcibench-4k70r --cache 800GB`")
    return tuple(f"{n}.{key}={value}" for n in names
                 for key, value in (("cache", cache), ("ftt", ftt)) if value is not None)


@click.command("run")
@click.argument("scenario")
@click.option("--duration", help="Measured time, overriding the scenario's (e.g. 60s, 10m).")
@click.option("--warmup", help="Warm-up before measuring, overriding the scenario's (e.g. 0, "
                               "30s).")
@click.option("--path", "target_path", type=click.Path(file_okay=False),
              help="Directory to run in, overriding the scenario's target path.")
@click.option("--lab", "lab_name", help="Run on lab platform NAME (`assay lab create`; a lab "
              "made with --dir: its directory): its platform, path, devices and IOPS cap "
              "replace the scenario's target; a lab cluster's hosts are the run's, as with "
              "--hosts and its inventory.")
@click.option("--set", "sets", multiple=True, metavar="WORKLOAD.PARAM=VALUE",
              help="Override a workload parameter for this run, e.g. --set mail.dataset=64GiB "
                   "or --set db.load.pacing=poisson (repeatable; stored with the run).")
@click.option("--cache", metavar="SIZE", help="HCIBench workloads: the platform's total cache "
              "(e.g. 800GB); the working set is cache x 0.25 (hybrid) or x 0.75 (all-flash) "
              "/ (FTT + 1), as HCIBench sizes it.")
@click.option("--ftt", type=click.IntRange(0, 3), help="HCIBench workloads: failures to "
              "tolerate (mirroring), with --cache.")
@hosts_options
@click.option("--keep", is_flag=True, help="Keep the data files of a temporary target.")
@click.option("--fresh", is_flag=True, help="Prefill again even if the dataset is unchanged.")
@click.option("--force", is_flag=True,
              help="Allow writing over files or devices that assay did not create.")
@click.option("--json", "json_mode", is_flag=True,
              help="Print one JSON document on stdout (human output goes to stderr).")
@click.option("--metrics", "metrics_at", metavar="[ADDRESS:]PORT", help="Serve live "
              "OpenMetrics for Prometheus at http://ADDRESS:PORT/metrics while the run lasts "
              "(ADDRESS defaults to 127.0.0.1; see docs/observability.md). Off by default.")
@results_option
def command(scenario: str, duration: str | None, warmup: str | None, target_path: str | None,
            lab_name: str | None, sets: tuple[str, ...], cache: str | None, ftt: int | None,
            hosts_file: Path | None, accept_new: bool, keep: bool, fresh: bool, force: bool,
            json_mode: bool, metrics_at: str | None, results: Path | None) -> None:
    """Run SCENARIO (a built-in name or a YAML file) and grade it.

    Exit status: 0 passed (or completed: no thresholds, nothing graded), 1 thresholds
    failed, 2 invalid input, 3 aborted or incomplete (graded on under 95 % of the measured
    seconds: no verdict), 4 internal error, 130 interrupted.
    """
    console = make_console(json_mode)
    placement = Placement.read(hosts_file, lab_name, target_path, accept_new, with_path=True)
    hosts = placement.hosts
    try:  # the lab's platform may lack an action the scenario asks for: checked in planning
        plan = planned(scenario, sets, duration_value(duration),
                       duration_value(warmup, "--warmup", allow_zero=True),
                       placement.target, cache, ftt, hosts)
    except ScenarioInvalid as e:
        raise scenario_error(e) from None
    target = plan.scenario.target
    where = target.path or target.device or "a temporary directory (removed afterwards" + \
        (", kept with --keep)" if not keep else "; --keep: kept)")
    runner: RunnerFactory = LocalRunner
    if plan.cluster is not None and hosts is not None:
        where = ", ".join(f"{h}:{hp.host.path}" for h, hp in plan.cluster.hosts.items())
        runner = functools.partial(ssh_runner, hosts, accept_new=accept_new)
    root = results_root(results)
    for line in leftovers.clean(root):  # a crashed run's temporary target, cgroup
        console.print(f"[yellow]{'left' if line.startswith('left ') else 'cleaned'}:[/] "
                      f"{escape(line.removeprefix('left '))}", highlight=False, soft_wrap=True)
    banner(console, plan, f"{len(plan.hosts)} hosts: {where}" if plan.cluster is not None
           else f"{target.platform}: {where}")
    with serving(metrics_at, plan, console) as watcher:
        engine = Engine(plan, RunOptions(root, keep=keep, fresh=fresh, force=force,
                                         json_mode=json_mode, runner=runner, watcher=watcher),
                        console)
        outcome = engine.execute()
    try:
        run = read_record(outcome.run_dir)
    except RecordError:  # not even the first run.json could be written (a full disk)
        console.print(f"[red]{outcome.status.upper()}[/] {outcome.reason}")
        raise SystemExit(int(outcome.exit_code)) from None
    if run.status != outcome.status:  # run.json could not be written at the end (a full disk)
        run.status, run.reason = outcome.status, outcome.reason  # type: ignore[assignment]
    print_summary(console, run, outcome.run_dir)
    if json_mode:
        click.echo(json.dumps(summary_document(run, outcome.run_dir), indent=2))
    raise SystemExit(int(outcome.exit_code))

"""`assay plan`: the resolved timeline and the exact fio jobs, checked by fio, without IO."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import click

from assay.cli.common import duration_value, scenario_error
from assay.console import make_console
from assay.exitcodes import UserError
from assay.fio.process import parse_only
from assay.plan import load
from assay.scenario.units import format_duration, format_size
from assay.scenario.yamlsource import ScenarioInvalid


@click.command("plan")
@click.argument("scenario")
@click.option("--duration", help="Measured time, overriding the scenario's (e.g. 60s).")
@click.option("--json", "json_mode", is_flag=True, help="Print the plan as JSON.")
@click.option("--no-check", is_flag=True, help="Skip `fio --parse-only` (no fio needed).")
def command(scenario: str, duration: str | None, json_mode: bool, no_check: bool) -> None:
    """Validate SCENARIO and print what a run would do, without doing any IO."""
    try:
        plan = load(scenario, duration_value(duration))
    except ScenarioInvalid as e:
        raise scenario_error(e) from None
    jobfile = plan.jobfile()
    complaint = None
    if not no_check:
        with tempfile.TemporaryDirectory(prefix="assay-plan-") as tmp:
            path = Path(tmp) / "run.fio"
            path.write_text(plan.jobfile(tmp), encoding="utf-8")
            complaint = parse_only(path)
    if json_mode:
        click.echo(json.dumps({
            "scenario": plan.name, "duration_s": plan.duration, "warmup_s": plan.warmup,
            "dataset_bytes": plan.dataset_bytes,
            "components": [{"name": c.name, "target_iops": c.target_iops}
                           for c in plan.components],
            "steps": [s.model_dump(mode="json") for s in plan.resolved.steps],
            "thresholds": [t.text for t in plan.thresholds],
            "fio_check": None if no_check else (complaint or "ok"),
            "jobfile": jobfile}, indent=2))
    else:
        con = make_console()
        con.print(f"[bold]{plan.name}[/]  {plan.scenario.description}")
        con.print(f"timeline: 0s-{format_duration(plan.warmup)} warm-up (not graded), "
                  f"{format_duration(plan.warmup)}-{format_duration(plan.total_seconds)} "
                  f"measured")
        for i, step in enumerate(plan.resolved.steps):
            when = (f"at {format_duration(step.at or 0)}" if step.after is None
                    else f"after {step.after}")
            if step.every:
                when += f", every {format_duration(step.every)}"
                when += f" x{step.count}" if step.count else " until the end"
            con.print(f"  step {i + 1}: {step.action} {when}")
        con.print(f"dataset: {format_size(plan.dataset_bytes)} in {len(plan.files)} files")
        con.print("components:")
        for c in plan.components:
            rate = f"{c.target_iops:,.1f} IO/s" if c.target_iops else "closed loop"
            con.print(f"  {c.name:<24} {rate}")
        con.print("thresholds:")
        for t in plan.thresholds:
            con.print(f"  {t.text}" + (f"  ({t.source})" if t.source else ""))
        if not plan.thresholds:
            con.print("  none: the run will not be graded")
        con.rule("fio job file")
        click.echo(jobfile)
        if not no_check:
            con.print("fio --parse-only: " + ("[green]ok[/]" if not complaint else
                                               f"[red]{complaint}[/]"))
    if complaint:
        raise UserError(f"fio rejected the generated job file: {complaint}")

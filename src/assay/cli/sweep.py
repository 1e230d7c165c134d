"""`assay sweep`: a grid of parameter values, repeats with confidence intervals, load curves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from assay.cli.common import (
    duration_value,
    group_session,
    results_option,
    results_root,
    scenario_error,
)
from assay.cli.placement import PlacedScenario, Placement, placement_options
from assay.console import make_console
from assay.exitcodes import UserError
from assay.plan import Plan, ScenarioFile, read_scenario
from assay.scenario.yamlsource import ScenarioInvalid
from assay.search import chart, measures
from assay.search.limit import CURVE_FRACTIONS
from assay.search.store import Group, group_key
from assay.search.sweep import (
    Overrides,
    Sweep,
    grid,
    parse_sets,
    point_key,
    repeat_groups,
    write_repeats,
)
from assay.search.trials import TrialSettings


@click.command("sweep")
@click.argument("scenario")
@click.option("--set", "sets", multiple=True, metavar="WORKLOAD.PARAM=v1,v2,...",
              help="Values of one parameter; several --set make a grid.")
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1, 100),
              help="Runs per point; with 2 or more, mean and 95 % CI go to repeats.json.")
@click.option("--curve", is_flag=True,
              help="Closed-loop run for the maximum, then 10/50/70/80/90/100 % of it as fixed "
                   "rates (load.scale of every workload).")
@click.option("--metric", "metrics", multiple=True, metavar="COMPONENT.METRIC",
              help="Table and chart columns, e.g. db.data.read.lat_p99 (repeatable).")
@click.option("--chart", "chart_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the metrics against the first parameter: FILE.svg or FILE.html.")
@click.option("--duration", help="Measured time of each run (default: the scenario's).")
@click.option("--path", "target_path", type=click.Path(file_okay=False),
              help="Directory to run in, overriding the scenario's target path.")
@click.option("--resume", "resume_id", metavar="SWEEP_ID",
              help="Continue a stopped sweep (default: an unfinished identical sweep is resumed "
                   "automatically).")
@click.option("--new", is_flag=True, help="Start afresh even if an identical sweep was stopped.")
@click.option("--force", is_flag=True,
              help="Allow writing over files or devices that assay did not create.")
@click.option("--json", "json_mode", is_flag=True, help="Print sweep.json on stdout.")
@placement_options
@results_option
def command(scenario: str, sets: tuple[str, ...], repeat: int, curve: bool,
            metrics: tuple[str, ...], chart_file: Path | None, duration: str | None,
            target_path: str | None, resume_id: str | None, new: bool, force: bool,
            json_mode: bool, lab_name: str | None, hosts_file: Path | None,
            accept_new: bool, results: Path | None) -> None:
    """Run SCENARIO at every combination of --set values, queued, and tabulate the results.

    Every run is stored and linked to the sweep; the sweep record is
    <results>/sweeps/<id>/sweep.json (and repeats.json with --repeat 2 or more).
    Exit status: 0 done, 2 invalid input, 3 a run aborted, 130 interrupted (resume later).
    """
    console = make_console(json_mode)
    root = results_root(results)
    seconds = duration_value(duration)
    if curve and sets:
        raise UserError("--curve varies load.scale itself; use it without --set")
    if chart_file and chart_file.suffix not in (".svg", ".html"):
        raise UserError(f"--chart {chart_file}: give a .svg or .html file")
    try:
        text, display, base = read_scenario(scenario)
        placement = Placement.read(hosts_file, lab_name, target_path, accept_new)
        scn = PlacedScenario(ScenarioFile(text, display, base), placement)
        parsed = parse_sets(scn, list(sets))
        points = grid(parsed)
        plans = [scn.plan(p, seconds) for p in points]  # every point validated before any IO
    except ScenarioInvalid as e:
        raise scenario_error(e) from None
    first = plans[0]
    chosen = measures.check(list(metrics), [c.name for c in first.components])
    if curve and not any(c.target_iops for c in first.components):
        raise UserError("--curve needs fixed-rate workloads (a target rate to scale)")
    key = group_key(scenario=text, sets=list(sets), repeat=repeat, curve=curve,
                    duration=seconds, path=target_path,
                    **placement.key(lab_name))
    group = _open(root, resume_id, new, key, {
        "key": key, "scenario": {"name": first.name, "file": display},
        "parameters": [p.text for p, _ in parsed], "values": [vs for _, vs in parsed],
        "repeat": repeat, "curve": curve, "metrics": chosen, "trials": []})
    sweep = Sweep(scn, group, TrialSettings(root, group.id, force=force, stop_early=False,
                                            target_path=target_path,
                                            runner=placement.runner()), console, seconds)
    kept = sweep.resume_cleanup()
    console.print(f"resuming sweep {group.id}: {kept} finished runs reused" if kept else
                  f"sweep {group.id}: {len(points)} points x {repeat} runs "
                  f"{placement.where(first)}".rstrip())
    sweep.on_trial = lambda t: console.print(_line(len(sweep.trials), t, chosen))
    with group_session(group, console, first, target_path,
                       f"assay sweep ... --resume {group.id}") as scratch:
        sweep.settings.target_path = scratch
        if curve:
            _curve(sweep, scn, first, repeat)
        else:
            sweep.run(points, repeat)
        sweep.finish()
    trials = [t for t in group.record["trials"] if not t.get("probe")]
    x_name = "load %" if curve else (parsed[0][0].text if parsed else "run")
    print_table(console, trials, chosen, curve)
    if repeat > 1:
        console.print(f"repeats: {write_repeats(group, first.name)}")
    if chart_file:
        write_chart(chart_file, first.name, x_name, trials, chosen, curve)
        console.print(f"chart: {chart_file}")
    console.print(f"sweep record: {group.file}")
    if json_mode:
        click.echo(json.dumps(group.record, indent=2, default=str))
    raise SystemExit(0)


def _open(root: Path, resume_id: str | None, new: bool, key: str,
          record: dict[str, Any]) -> Group:
    if resume_id:
        group = Group.open(root, "sweep", resume_id)
        if group is None:
            raise UserError(f"--resume {resume_id}: no such sweep in {root / 'sweeps'}")
        if group.record.get("key") != key:
            raise UserError(f"--resume {resume_id}: that sweep was started with other options")
        return group
    found = None if new else Group.unfinished(root, "sweep", key)
    return found or Group.create(root, "sweep", record["scenario"]["name"], record)


def _curve(sweep: Sweep, scn: ScenarioFile, plan: Plan, repeat: int) -> None:
    """Closed-loop probe → per-workload maximum → fixed rates at fractions of it."""
    names = list(plan.resolved.workloads)
    probe: Overrides = [(scn.param(f"{w}.load.model"), "closed") for w in names]
    done = sweep.done(point_key(probe), 0)
    record = done or sweep.trial(probe, 0, graded=False, probe=True)
    ratios = {}
    for w in names:
        target = sum(c.target_iops or 0 for c in plan.components if c.workload == w)
        got = sum(s["iops"] or 0 for c, s in record["stats"].items() if c.split(".")[0] == w)
        if target:
            ratios[w] = got / target
    sweep.group.record["maximum"] = {"probe_run": record["run_id"], "scale": ratios}
    points, extra = [], []
    for f in CURVE_FRACTIONS:
        points.append([(scn.param(f"{w}.load.scale"), round(f * r, 4))
                       for w, r in ratios.items()])
        extra.append({"fraction": f})
    sweep.run(points, repeat, extra)


def _x(t: dict[str, Any], curve: bool) -> float:
    if curve:
        return 100.0 * t["fraction"]
    values = list(t["point"].values())
    return float(values[0]) if values and isinstance(values[0], int | float) else 0.0


def _line(n: int, t: dict[str, Any], metrics: list[str]) -> str:
    point = ", ".join(f"{k}={v}" for k, v in t["point"].items()) or "(as written)"
    figures = "  ".join(f"{m.rpartition('.')[2]} {measures.fmt(m, measures.value(t, m))}"
                        for m in metrics)
    return f"  run {n:>2}  {point}  {t['status']}  {figures}  {t['seconds']:.0f}s"


def print_table(console: Console, trials: list[dict[str, Any]], metrics: list[str],
                curve: bool) -> None:
    groups = repeat_groups(trials)
    params = list(groups[0]["point"]) if groups else []
    table = Table(title="sweep", title_justify="left")
    for h in (["load"] if curve else []) + params + ["runs", "verdict"] + metrics:
        table.add_column(h, justify="right")
    fractions = {repr(sorted(t["point"].items())): t.get("fraction") for t in trials}
    for g in groups:
        statuses = g["statuses"]
        verdict = statuses[0] if len(set(statuses)) == 1 else \
            f"{statuses.count('passed')}/{len(statuses)} passed"
        cells = []
        for m in metrics:
            s = g["metrics"].get(m) or {}
            cell = measures.fmt(m, s.get("mean"))
            if s.get("half_width") is not None:
                cell += f" ± {measures.fmt(m, s['half_width'])}"
            cells.append(cell)
        load = fractions.get(repr(sorted(g["point"].items())))
        table.add_row(*([f"{load:.0%}" if load is not None else "-"] if curve else []),
                      *[str(v) for v in g["point"].values()], str(g["n"]), verdict, *cells)
    console.print(table)


def write_chart(path: Path, name: str, x_name: str, trials: list[dict[str, Any]],
                metrics: list[str], curve: bool) -> None:
    """One panel per metric; one line per combination of the other parameters."""
    panels = []
    for m in metrics:
        lines: dict[str, list[tuple[float, float]]] = {}
        for g in repeat_groups(trials):
            others = {k: v for i, (k, v) in enumerate(g["point"].items()) if i > 0 and not curve}
            label = ", ".join(f"{k}={v}" for k, v in others.items()) or m
            t = next(t for t in trials if t["run_id"] == g["runs"][0])
            mean = (g["metrics"].get(m) or {}).get("mean")
            if mean is not None:
                lines.setdefault(label, []).append((_x(t, curve), mean))
        panels.append((measures.label(m), list(lines.items())))
    svg = chart.svg(f"{name}: {', '.join(metrics)} against {x_name}", x_name, panels)
    if path.suffix == ".html":
        svg = (f"<!doctype html><html><head><meta charset='utf-8'><title>{name}</title>"
               f"</head><body>{svg}</body></html>\n")
    path.write_text(svg, encoding="utf-8")

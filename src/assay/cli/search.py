"""`assay search`: the largest value of one parameter that passes every threshold."""

from __future__ import annotations

import html
import json
import time
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
from assay.exitcodes import ExitCode, UserError
from assay.plan import ScenarioFile, read_scenario
from assay.scenario.overrides import Param
from assay.scenario.yamlsource import ScenarioInvalid
from assay.search import bisect, chart, measures, spec_curve
from assay.search.limit import LimitSearch
from assay.search.store import Group, group_key
from assay.search.trials import TrialSettings


def precision_value(text: str) -> float:
    try:
        p = float(text.rstrip("%")) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise UserError(f"--precision: expected e.g. 2% or 0.02, got {text!r}") from None
    if not 0 < p < 1:
        raise UserError(f"--precision: must be between 0 and 100 %, got {text!r}")
    return p


def trial_line(param: Param, n: int, t: dict[str, Any]) -> str:
    verdict = {"passed": "[green]PASS[/]", "failed": "[red]FAIL[/]"}.get(
        t["status"], f"[yellow]{t['status'].upper()}[/]")
    d = t.get("deciding") or {}
    why = ""
    if d:
        obs = "-" if d.get("observed") is None else f"{d['observed']:,.4g}"
        why = f"{d['expr']} ({d['component']}) observed {obs} vs bound {d['bound']:,.4g}"
    early = "  stopped early" if t.get("stopped_early") else ""
    return (f"  trial {n:>2}  {param.text} = {t['value']:<10,g}  {verdict}  {why}  "
            f"{t['seconds']:.0f}s{early}")


def answer_text(param: Param, a: bisect.Answer, trials: int) -> str:
    if a.status == "below-range":
        return f"no value passes: even {param.text} = {a.first_fail:,} fails (lower --from)"
    if a.status == "above-range":
        return f"{param.text} = {a.last_pass:,} (--to) passes: the limit is higher (raise --to)"
    head = "answer" if a.status == "found" else "best so far (trial limit reached)"
    if a.last_pass is None:
        return f"{head}: no pass yet; smallest failure {param.text} = {a.first_fail:,}"
    margin = (f"; first fail {a.first_fail:,} (precision {a.precision:.1%})"
              if a.first_fail is not None and a.precision is not None else "")
    return f"{head}: {param.text} = {a.last_pass:,} passes{margin}; {trials} trials"


@click.command("search")
@click.argument("scenario")
@click.option("--vary", required=True, metavar="WORKLOAD.PARAM",
              help="The parameter to search, e.g. mail.mailboxes, db.data_iops, db.load.scale.")
@click.option("--from", "low", required=True, type=float, help="Smallest value to consider.")
@click.option("--to", "high", required=True, type=float, help="Largest value to consider.")
@click.option("--precision", default="2%", show_default=True,
              help="Stop when (first fail - last pass) / last pass is at most this.")
@click.option("--max-trials", default=12, show_default=True, type=click.IntRange(2, 100))
@click.option("--duration", help="Measured time of each trial (default: the scenario's).")
@click.option("--path", "target_path", type=click.Path(file_okay=False),
              help="Directory to run in, overriding the scenario's target path.")
@click.option("--curve", is_flag=True,
              help="Then run 10/50/70/80/90/100 % of the answer: latency against load.")
@click.option("--points", type=click.IntRange(2, 20),
              help="With --curve: N equal steps, 1/N .. N/N of the answer, the SPECstorage "
                   "way (10: 10 % to 100 %), each point valid or not and SPEC's ORT beside "
                   "the p99 and the knee.")
@click.option("--metric", "metrics", multiple=True, metavar="COMPONENT.METRIC",
              help="What the curve shows (default: first read component lat_p99 and iops).")
@click.option("--chart", "chart_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the curve as an SVG chart.")
@click.option("--resume", "resume_id", metavar="SEARCH_ID",
              help="Continue a stopped search (default: an unfinished identical search is "
                   "resumed automatically).")
@click.option("--new", "new", is_flag=True, help="Start afresh even if an identical search "
                                                 "was stopped.")
@click.option("--no-early-stop", is_flag=True, help="Run every trial to its end.")
@click.option("--force", is_flag=True,
              help="Allow writing over files or devices that assay did not create.")
@click.option("--json", "json_mode", is_flag=True, help="Print search.json on stdout.")
@placement_options
@results_option
def command(scenario: str, vary: str, low: float, high: float, precision: str,
            max_trials: int, duration: str | None, target_path: str | None, curve: bool,
            points: int | None, metrics: tuple[str, ...], chart_file: Path | None,
            resume_id: str | None, new: bool,
            no_early_stop: bool, force: bool, json_mode: bool, lab_name: str | None,
            hosts_file: Path | None, accept_new: bool, results: Path | None) -> None:
    """Find the largest WORKLOAD.PARAM in [--from, --to] whose run passes every threshold.

    Each trial is a stored run linked to the search; the search record is
    <results>/searches/<id>/search.json. Exit status: 0 answer found, 1 no value passes,
    2 invalid input, 3 a trial aborted, 130 interrupted (resume later).
    """
    console = make_console(json_mode)
    root = results_root(results)
    seconds = duration_value(duration)
    p = precision_value(precision)
    if not 0 < low < high:
        raise UserError(f"--from {low:g} --to {high:g}: need 0 < from < to")
    if points and not curve:
        raise UserError("--points shapes the curve: give --curve too")
    try:
        text, display, base = read_scenario(scenario)
        placement = Placement.read(hosts_file, lab_name, target_path, accept_new)
        scn = PlacedScenario(ScenarioFile(text, display, base), placement)
        param = scn.param(vary)
        first = scn.plan([(param, int(low) if param.integer else low)], seconds)
        scn.plan([(param, int(high) if param.integer else high)], seconds)
    except ScenarioInvalid as e:
        raise scenario_error(e) from None
    if not first.thresholds:  # every trial would end `completed`: nothing to bisect on
        raise UserError(f"{display}: a search finds the largest value that passes every "
                        f"threshold, and this scenario declares none (add `thresholds:`)")
    chosen = measures.check(list(metrics), [c.name for c in first.components])
    space = bisect.Space(low, high, p, param.integer, max_trials)
    key = group_key(scenario=text, vary=param.text, low=low,
                    high=high, precision=p, duration=seconds, path=target_path,
                    **placement.key(lab_name))
    group = _open_group(root, resume_id, new, key, console, {
        "key": key, "scenario": {"name": first.name, "file": display}, "parameter": param.text,
        "integer": param.integer, "bounds": [low, high], "precision": p,
        "duration_s": first.duration, "warmup_s": first.warmup, "trials": []})
    search = LimitSearch(scn, param, space, group, TrialSettings(
        root, group.id, force=force, stop_early=not no_early_stop, target_path=target_path,
        runner=placement.runner()), console, seconds)
    kept = search.resume_cleanup()
    if kept:
        console.print(f"resuming search {group.id}: {kept} finished trials reused")
        for n, t in enumerate(search.trials, 1):
            console.print(trial_line(param, n, t))
    else:
        console.print(f"search {group.id}: {param.text} in [{low:g}, {high:g}], "
                      f"precision {p:.1%} {placement.where(first)}".rstrip())
    search.on_trial = lambda t: console.print(trial_line(param, len(search.trials), t))
    t0 = time.monotonic()
    with group_session(group, console, first, target_path,
                       f"assay search ... --resume {group.id}") as scratch:
        search.settings.target_path = scratch
        answer = search.run()
        console.print(f"[bold]{answer_text(param, answer, len(search.trials))}[/] "
                      f"({time.monotonic() - t0:.0f}s)")
        if curve and answer.last_pass:
            search.on_trial = lambda t: console.print(trial_line(param, len(
                group.record["curve"]), t).replace("trial", "curve", 1))
            if points:
                done = search.curve(answer.last_pass, spec_curve.fractions(points))
                group.record["spec_curve"] = spec_points(done, chosen)
                print_spec_curve(console, param, done, group.record["spec_curve"], chosen)
            else:
                done = search.curve(answer.last_pass)
                print_curve(console, param, done, chosen)
            if chart_file:
                write_chart(chart_file, first.name, param, done, chosen,
                            group.record.get("spec_curve"))
                console.print(f"chart: {chart_file}")
        search.finish()
    console.print(f"search record: {group.file}")
    if json_mode:
        click.echo(json.dumps(group.record, indent=2, default=str))
    raise SystemExit(int(ExitCode.FAILED if answer.status == "below-range" else ExitCode.PASSED))


def _open_group(root: Path, resume_id: str | None, new: bool, key: str, console: Console,
                record: dict[str, Any]) -> Group:
    if resume_id:
        group = Group.open(root, "search", resume_id)
        if group is None:
            raise UserError(f"--resume {resume_id}: no such search in {root / 'searches'}")
        if group.record.get("key") != key:
            raise UserError(f"--resume {resume_id}: that search was started with another "
                            f"scenario, parameter, bounds or duration "
                            f"({group.record.get('parameter')} in {group.record.get('bounds')})")
        return group
    if not new:
        group_ = Group.unfinished(root, "search", key)
        if group_ is not None:
            return group_
    return Group.create(root, "search", record["scenario"]["name"], record)


def print_curve(console: Console, param: Param, points: list[dict[str, Any]],
                metrics: list[str]) -> None:
    table = Table(title="latency against load", title_justify="left")
    for h in ("load", param.text, "verdict", *metrics):
        table.add_column(h, justify="right")
    for t in sorted(points, key=lambda t: t["value"]):
        table.add_row(f"{t['fraction']:.0%}", f"{t['value']:,}", t["status"],
                      *[measures.fmt(m, measures.value(t, m)) for m in metrics])
    console.print(table)


def write_chart(path: Path, name: str, param: Param, points: list[dict[str, Any]],
                metrics: list[str], spec: dict[str, Any] | None = None) -> None:
    panels = []
    for m in metrics:
        pts = [(float(t["value"]), v) for t in points
               if (v := measures.value(t, m)) is not None]
        panels.append((measures.label(m), [(m, pts)]))
    invalid = {float(t["value"]) for t in (spec or {}).get("points", []) if t["valid"] is False}
    knee = "-" if not spec or spec.get("knee") is None else f"{spec['knee']:,g}"
    title = f"{name}: latency against load" + (
        f" (ORT {spec['ort_ms']:.2f} ms, knee {knee}; red rings: invalid points)"
        if spec and spec.get("ort_ms") is not None else "")
    text = chart.svg(title, param.text, panels, invalid)
    if path.suffix.lower() in (".html", ".htm"):
        text = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(name)}"
                f"</title></head><body>{text}</body></html>\n")
    path.write_text(text, encoding="utf-8")


def spec_points(done: list[dict[str, Any]], metrics: list[str]) -> dict[str, Any]:
    """Validity per point, SPEC's ORT and the knee of the first latency metric."""
    lat = next((m for m in metrics if m.rpartition(".")[2].startswith("lat_")), None)
    rows = []
    for t in sorted(done, key=lambda t: t["value"]):
        v = spec_curve.validity(t.get("stats") or {})
        comp = lat.rpartition(".")[0] if lat else ""
        avg = ((t.get("stats") or {}).get(comp) or {}).get("lat_avg")
        rows.append({"value": t["value"], "fraction": t["fraction"], **v,
                     "lat_avg": avg, "p99": measures.value(t, lat) if lat else None})
    avg_curve = [(float(r["value"]), float(r["lat_avg"])) for r in rows
                 if r["lat_avg"] is not None]
    p99_curve = [(float(r["value"]), float(r["p99"])) for r in rows if r["p99"] is not None]
    ort = spec_curve.ort(avg_curve)
    return {"points": rows, "ort_ms": None if ort is None else round(ort, 4),
            "knee": spec_curve.knee(p99_curve), "metric": lat,
            "valid_points": sum(r["valid"] is True for r in rows)}


def print_spec_curve(console: Console, param: Param, done: list[dict[str, Any]],
                     spec: dict[str, Any], metrics: list[str]) -> None:
    table = Table(title="latency against load (SPECstorage-style points)", title_justify="left")
    for h in ("load", param.text, "valid", "achieved", "worst", "avg", "p99"):
        table.add_column(h, justify="right")
    top = max((float(r["value"]) for r in spec["points"]), default=1.0) or 1.0
    for r in spec["points"]:
        mark = {True: "yes", False: "[red]INVALID[/]", None: "-"}[r["valid"]]
        knee = " ← knee" if spec["knee"] is not None and float(r["value"]) == spec["knee"] else ""
        table.add_row(f"{float(r['value']) / top:.0%}", f"{r['value']:,}", mark,
                      "-" if r["overall"] is None else f"{r['overall']:.1%}",
                      "-" if r["worst"] is None else f"{r['worst']:.1%}",
                      measures.fmt("x.lat_avg", r["lat_avg"]),
                      measures.fmt("x.lat_p99", r["p99"]) + knee)
    console.print(table)
    if spec["ort_ms"] is not None:
        last = spec["points"][-1]["p99"] if spec["points"] else None
        console.print(f"ORT (SPEC's average over the curve) {spec['ort_ms']:.2f} ms; p99 at the "
                      f"top point {measures.fmt('x.lat_p99', last)}; knee at "
                      f"{param.text} = {spec['knee'] if spec['knee'] is not None else '-'}; "
                      f"{spec['valid_points']} of {len(spec['points'])} points valid "
                      f"(>= 95 % overall, >= 75 % each)")

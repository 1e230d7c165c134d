"""`assay compare`: several stored runs overlaid, deltas against noise, what else differed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from assay.cli.common import find_run, results_option, results_root
from assay.cli.damaged import refuse_damage
from assay.console import make_console
from assay.exitcodes import UserError
from assay.report.compare import CompareError, build_compare, load_views
from assay.scenario.units import format_latency_ms

SHOWN_DIFFERENCES = 40


def _fmt(metric: str, v: float | None) -> str:
    if v is None:
        return "-"
    return format_latency_ms(v) if metric.startswith("lat_") else f"{v:,.1f}"


def print_comparison(con: Console, data: dict[str, Any]) -> None:
    runs = data["runs"]
    for r in runs:
        con.print(f"[bold]{r['label']}[/] {r['id']}  {r['status']}  {r['target']}")
    t = Table(title="Differences in results", title_justify="left", show_edge=False,
              pad_edge=False)
    t.add_column("component")
    t.add_column("metric")
    t.add_column(f"{runs[0]['label']} (baseline)", justify="right")
    for r in runs[1:]:
        t.add_column(r["label"], justify="right")
        t.add_column("Δ", justify="right")
        t.add_column("verdict")
    for d in data["deltas"]:
        cells = [d["component"], d["metric"], _fmt(d["metric"], d["values"][0])]
        for i, v in enumerate(d["versus"]):
            cells.append(_fmt(d["metric"], d["values"][i + 1]))
            cells.append("-" if v["delta_pct"] is None else f"{v['delta_pct']:+.1f}%")
            cells.append("n/a" if v["significant"] is None else
                         "[red]differs[/]" if v["significant"] else "[dim]within noise[/]")
        t.add_row(*cells)
    con.print(t)
    con.print(f"[dim]{data['method']}[/]")
    diffs = data["differences"]
    if not diffs:
        con.print("what differed: no configuration or environment fact differs")
        return
    w = Table(title="What differed", title_justify="left", show_edge=False, pad_edge=False)
    w.add_column("fact")
    for r in runs:
        w.add_column(r["label"], overflow="fold")
    for key, values in diffs[:SHOWN_DIFFERENCES]:
        w.add_row(key, *values)
    con.print(w)
    if len(diffs) > SHOWN_DIFFERENCES:
        con.print(f"... and {len(diffs) - SHOWN_DIFFERENCES} more facts in the HTML comparison")


@click.command("compare")
@click.argument("runs", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the HTML comparison (default: compare.html in the results "
                   "directory).")
@click.option("--align", "how", default="start", show_default=True, metavar="start|event:NAME",
              help="Align the series on each run's start or on a timeline step's start.")
@click.option("--json", "json_mode", is_flag=True,
              help="Print deltas and differences as JSON instead of tables.")
@results_option
def command(runs: tuple[str, ...], output: Path | None, how: str, json_mode: bool,
            results: Path | None) -> None:
    """Compare two or more RUNS (ids, prefixes, paths or `last`); the first is the baseline."""
    if len(runs) < 2:
        raise UserError("compare needs at least two runs")
    found = [find_run(r, results) for r in runs]
    paths = [p for p, _ in found]
    try:
        text, data = build_compare(load_views(paths), how)
    except CompareError as e:
        raise UserError(str(e)) from None
    out = output or results_root(results) / "compare.html"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot write {out}: {e.strerror or e}") from None
    if json_mode:
        slim = {k: data[k] for k in ("method", "alignment_note", "deltas", "differences")}
        slim["runs"] = [{k: r[k] for k in ("label", "id", "status", "target")}
                        for r in data["runs"]]
        slim["html"] = str(out)
        click.echo(json.dumps(slim, indent=2))
        refuse_damage(list({p: (p, r) for p, r in found}.values()))
        return
    con = make_console()
    print_comparison(con, data)
    con.print(f"HTML comparison: {out}")
    refuse_damage(list({p: (p, r) for p, r in found}.values()))

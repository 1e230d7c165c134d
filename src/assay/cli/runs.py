"""`assay runs`: the catalogue of stored runs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from rich.table import Table

from assay.cli.common import results_option, results_root
from assay.console import make_console
from assay.report.terminal import STATUS_STYLE
from assay.results.catalogue import Catalogue


@click.command("runs")
@click.option("--scenario", help="Only runs whose scenario name contains this.")
@click.option("--limit", default=30, show_default=True, help="How many runs to list.")
@click.option("--json", "json_mode", is_flag=True, help="Print the list as JSON.")
@results_option
def command(scenario: str | None, limit: int, json_mode: bool, results: Path | None) -> None:
    """List stored runs, newest first."""
    rows = Catalogue(results_root(results)).list(limit, scenario)
    if json_mode:
        click.echo(json.dumps(rows, indent=2))
        return
    con = make_console()
    if not rows:
        con.print(f"no runs in {results_root(results)}")
        return
    t = Table(show_edge=False, pad_edge=False)
    for col in ("id", "scenario", "started", "status", "thresholds", "target"):
        t.add_column(col)
    for r in rows:
        s = json.loads(r["summary"] or "{}")
        grade = f"{s.get('passed') or 0} ok / {s.get('failed') or 0} failed"
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["started"] or 0))
        style = STATUS_STYLE.get(r["status"], "")
        t.add_row(r["id"], r["scenario"], started, f"[{style}]{r['status']}[/]", grade,
                  r["target"])
    con.print(t)

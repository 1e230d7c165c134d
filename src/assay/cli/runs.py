"""`assay runs`: the catalogue of stored runs."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from assay.cli.common import results_option, results_root
from assay.console import make_console
from assay.exitcodes import UserError
from assay.report.terminal import STATUS_STYLE
from assay.results.blockread import last_second
from assay.results.catalogue import Catalogue
from assay.results.printable import printable

# statuses the terminal summary does not know: a run that can no longer finish
_EXTRA_STYLE = {"crashed": "bold red", "unreadable": "bold red"}


def shown(text: str | None) -> str:
    """A stored name for the table: control characters and rich markup escaped."""
    return escape(printable(text or ""))


def when(started: float | None) -> str:
    """Local time of a start, or `-` where there is none this platform can convert."""
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(started)) if started else "-"
    except (OverflowError, ValueError, OSError):
        return "-"


def summary(text: str | None) -> dict[str, object]:
    try:
        s = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {}
    return s if isinstance(s, dict) else {}


@click.command("runs")
@click.option("--scenario", help="Only runs whose scenario name contains this.")
@click.option("--limit", default=30, show_default=True, type=click.IntRange(min=1),
              help="How many runs to list.")
@click.option("--json", "json_mode", is_flag=True, help="Print the list as JSON.")
@click.option("--rebuild", is_flag=True,
              help="Rebuild the catalogue from the run directories (it is only an index).")
@results_option
def command(scenario: str | None, limit: int, json_mode: bool, rebuild: bool,
            results: Path | None) -> None:
    """List stored runs, newest first.

    A run that says `running` but whose process is gone is shown as `crashed`; a run whose
    run.json is damaged is listed as `unreadable`, and what is wrong with it is said on
    standard error (`damaged` in the JSON).
    """
    root = results_root(results)
    catalogue = Catalogue(root)
    con = make_console(json_mode)
    if rebuild:
        try:
            n = catalogue.rebuild()
        except (sqlite3.Error, OSError) as e:
            raise UserError(f"cannot rebuild {catalogue.file}: {e}") from None
        con.print(f"rebuilt {catalogue.file} from {n} run director{'y' if n == 1 else 'ies'}")
    rows = catalogue.list(limit, scenario)
    for r in rows:  # how far a crashed run got: its seconds up to there are all kept
        if r["status"] == "crashed":
            r["last_t"] = last_second(Path(r["path"]))
    if catalogue.notice:
        click.echo(f"note: {printable(catalogue.notice)}", err=True)
    for r in rows:  # each damaged run once, with what is wrong; the others are listed as ever
        if r["damaged"]:
            click.echo(f"damaged: {printable(r['id'])}: {printable(r['damaged'])}", err=True)
    if json_mode:
        click.echo(json.dumps([{k: r[k] for k in r if k != "mtime"} for r in rows], indent=2))
        return
    if not rows:
        con.print(f"no runs in {shown(str(root))}")
        return
    t = Table(show_edge=False, pad_edge=False)
    for col in ("id", "scenario", "started", "status", "thresholds", "target"):
        t.add_column(col)
    for r in rows:
        s = summary(r["summary"])
        grade = f"{s.get('passed') or 0} ok / {s.get('failed') or 0} failed"
        if r["status"] == "completed":
            grade = "none: nothing graded"
        elif r["status"] == "incomplete":
            grade = f"{s.get('not_graded') or 0} not graded"
        if r["damaged"]:
            grade = "-"
        started = when(r["started"])
        style = STATUS_STYLE.get(r["status"]) or _EXTRA_STYLE.get(r["status"], "")
        status = f"[{style}]{shown(r['status'])}[/]" if style else shown(r["status"])
        if r.get("last_t") is not None:
            status += f" at {r['last_t']:.0f}s"
        t.add_row(shown(r["id"]), shown(r["scenario"]), started, status, grade,
                  shown(r["target"]))
    con.print(t)

"""`assay export`: a stored run as JSON, CSV, JUnit XML or OpenMetrics (for spreadsheets, CI
and Prometheus)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.common import find_run, results_option
from assay.cli.damaged import refuse_damage
from assay.exitcodes import UserError
from assay.report.exports import names, render
from assay.report.salvage import measured


@click.command("export")
@click.argument("run", default="last")
@click.option("--format", "fmt", type=click.Choice(names()), default="json",
              show_default=True, help="json: the --json summary plus per-second series; "
              "csv: per-second series; junit: one test case per threshold; openmetrics: "
              "per-second series with timestamps, for `promtool tsdb create-blocks-from "
              "openmetrics` (docs/observability.md).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to FILE instead of standard output.")
@results_option
def command(run: str, fmt: str, output: Path | None, results: Path | None) -> None:
    """Export RUN (an id, a prefix of one, a path, or `last`) for other tools."""
    path, record = find_run(run, results)
    text = render(fmt, path, measured(path, record))  # a crashed run: what it measured
    if output is None:
        click.echo(text, nl=False)
        refuse_damage([(path, record)])
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot write {output}: {e.strerror or e}") from None
    click.echo(str(output), err=True)
    refuse_damage([(path, record)])

"""`assay report`: a stored run as one self-contained HTML file (rebuilt without fio)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.common import find_run, results_option
from assay.cli.damaged import refuse_damage
from assay.exitcodes import UserError
from assay.report.html import write_report


@click.command("report")
@click.argument("run", default="last")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the HTML (default: report.html in the run directory).")
@results_option
def command(run: str, output: Path | None, results: Path | None) -> None:
    """Write the HTML report of RUN (an id, a prefix of one, a path, or `last`).

    \b
    The file is self-contained (no network, no server): verdict, thresholds, per-workload
    table, per-second charts with timeline steps and phases, latency by percentile, the
    environment and the scenario.
    """
    path, record = find_run(run, results)
    try:
        out = write_report(path, output)
    except OSError as e:
        raise UserError(f"cannot write the report: {e.strerror or e}: {e.filename or output}") \
            from None
    except ValueError as e:
        raise UserError(f"{path}: {e}") from None
    click.echo(str(out))
    refuse_damage([(path, record)])

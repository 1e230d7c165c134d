"""`assay show`: a stored run's summary again."""

from __future__ import annotations

import json
from pathlib import Path

import click

from assay.cli.common import find_run, results_option
from assay.cli.damaged import refuse_damage
from assay.console import make_console
from assay.report.jsondoc import summary_document
from assay.report.salvage import measured, shout, status_label
from assay.report.terminal import print_summary
from assay.results.liveness import effective_status


@click.command("show")
@click.argument("run", default="last")
@click.option("--json", "json_mode", is_flag=True, help="Print the summary as JSON.")
@results_option
def command(run: str, json_mode: bool, results: Path | None) -> None:
    """Print the summary of RUN (an id, a prefix of one, a path, or `last`)."""
    path, record = find_run(run, results)
    status = effective_status(record.stored(), path)
    record = measured(path, record)  # a run that never wrote its end: what it measured
    label = status_label(path, record)
    if json_mode:
        doc = {**summary_document(record, path), "status": status}
        if label != status:
            doc["verdict"] = shout(label)
        click.echo(json.dumps(doc, indent=2))
        refuse_damage([(path, record)])
        return
    console = make_console()
    print_summary(console, record, path, label)
    if status == "crashed":
        console.print(f"[red]crashed:[/] the assay process (pid {record.pid}) is gone; the "
                      f"record holds the seconds measured until then")
    refuse_damage([(path, record)])

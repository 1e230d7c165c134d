"""`assay clean`: remove what crashed runs left behind (temporary targets, blkio groups)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.common import results_option, results_root
from assay.console import make_console
from assay.leftovers import clean


@click.command("clean")
@results_option
def command(results: Path | None) -> None:
    """Remove the leftovers of crashed runs: a run whose assay process is gone (killed, or the
    machine restarted) while run.json still says `running`. Its results stay; its temporary
    target directory and its blkio cgroup go, and so do the SSH control directories
    ($TMPDIR/assay-ssh-*) and ControlMaster processes of a killed cluster run. `assay run`
    does this before it starts."""
    console = make_console()
    done = clean(results_root(results), unowned_ssh=True)
    for line in done:
        console.print(line)
    if not done:
        console.print("nothing to clean: no crashed run left anything behind")

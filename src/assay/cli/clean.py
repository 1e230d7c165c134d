"""`assay clean`: remove what crashed runs left behind (temporary targets, blkio groups)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from assay.cli.common import results_option, results_root
from assay.cluster.hostclean import clean_hosts
from assay.console import make_console
from assay.hosts import inventory
from assay.leftovers import clean, crashed


@click.command("clean")
@results_option
@click.option("--hosts", "hosts_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also clean these hosts (an Ansible inventory): the run directories runs "
                   "left in their $TMPDIR (a host lost mid-run), the PostgreSQL copies a "
                   "crashed run left in their targets (their agent gone), with their servers, "
                   "and the empty blkio groups of the crashed runs in the results.")
def command(results: Path | None, hosts_file: Path | None) -> None:
    """Remove the leftovers of crashed runs: a run whose assay process is gone (killed, or the
    machine restarted) while run.json still says `running`. Its results stay; its temporary
    target directory and its blkio cgroup go, and so do the SSH control directories
    ($TMPDIR/assay-ssh-*) and ControlMaster processes of a killed cluster run. `assay run`
    does this before it starts. With --hosts, each host too: the run directory a run left
    in its $TMPDIR (a host lost mid-run, or restarted; only directories with assay's mark
    whose run is gone), a database a postgres workload left in its target (only copies
    with assay's marker), and the blkio groups there of the crashed runs in the results
    (empty ones only).

    \b
    Only what assay made goes, proven on disk, never on the word of a run.json (anyone who
    can write into the results could craft one): a temporary target only if the directory
    at its path is the one its run made (device and inode, as recorded) and holds its run's
    mark; a symbolic link is never followed. What is left is said: `left PATH: not made by
    run ID (why)`. A run recorded by an older assay holds no such proof: its temporary
    target is left, and said, for you to remove."""
    console = make_console()
    root = results_root(results)
    runs = crashed(root)
    done = clean(root, unowned_ssh=True, runs=runs)
    if hosts_file is not None:
        done += clean_hosts(inventory.load(hosts_file), [d.name for d in runs])
    for line in done:
        # a path from a record is data, never markup
        console.print(f"[yellow]{escape(line)}[/]" if line.startswith("left ") else
                      escape(line), highlight=False, soft_wrap=True)
    if not done:
        console.print("nothing to clean: no crashed run left anything behind")

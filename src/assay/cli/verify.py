"""`assay verify`: a checksum pass over a finished run's integrity blocks."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from assay.cli.common import find_run, results_option
from assay.console import LiveProgress, make_console
from assay.exitcodes import ExitCode
from assay.hosts import inventory
from assay.integrity.block import PROBLEMS
from assay.integrity.offline import RESULT, verify_run

EXIT = {"passed": ExitCode.PASSED, "failed": ExitCode.FAILED,
        "interrupted": ExitCode.INTERRUPTED, "running": ExitCode.ABORTED}


@click.command("verify")
@click.argument("run", default="last")
@click.option("--json", "json_mode", is_flag=True, help="Print the result as JSON.")
@click.option("--hosts", "hosts_file", type=click.Path(dir_okay=False, path_type=Path),
              help="A cluster run's hosts (an Ansible inventory that names them): each checks "
                   "its own blocks again, where they are.")
@results_option
def command(run: str, json_mode: bool, hosts_file: Path | None, results: Path | None) -> None:
    """Check every integrity block of RUN (an id, a prefix, a path or `last`) against the
    journal of acknowledged writes the run kept, and every block of the workloads' own data
    files against its fio verify header, like Jetstress' closing checksum pass.

    \b
    Reports the blocks lost, stale, corrupt and unreadable (first 100 offsets each, data
    files' by file and offset), the throughput of the pass, and a verdict; writes
    RUN/verify.json. Ctrl-C stops the pass and
    leaves verify.json with status `interrupted` and what was counted so far.
    Exit: 0 every block ok, 1 a problem found, 130 interrupted, 2 nothing to verify, 3 a
    host of a cluster run could not be checked (no verdict).

    A cluster run kept its blocks on its hosts: with --hosts, each host checks its own with
    assay's agent, against the journal the run brought back, all at once; a problem's offset
    names its host.

    \b
      assay run disk-failure --lab faulty
      assay verify last
      assay verify last --hosts inventory.ini
    """
    path, record = find_run(run, results)
    hosts = inventory.load(hosts_file) if hosts_file is not None else None
    stop = threading.Event()

    def interrupt(signum: int, frame: Any) -> None:
        stop.set()

    old = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with contextlib.ExitStack() as shown:
            doc = verify_run(path, record, stop, _progress(make_console(json_mode), shown),
                             hosts=hosts)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    if json_mode:
        click.echo(json.dumps(doc, indent=2))
    else:
        _print(doc, path)
    raise SystemExit(int(EXIT.get(doc["status"], ExitCode.ABORTED)))


def _progress(con: Console, shown: contextlib.ExitStack) -> Callable[[int, int], None]:
    """The pass's bytes read as a bar (on stderr with --json), from its first report on."""
    bar: list[LiveProgress] = []
    t0 = time.monotonic()

    def show(read: int, total: int) -> None:
        if not bar:
            bar.append(shown.enter_context(LiveProgress(con, "verify", total / 1e6, "MB")))
        mbps = read / 1e6 / max(time.monotonic() - t0, 1e-3)
        bar[0].update(read / 1e6, f"{read / 1e6:,.0f} of {total / 1e6:,.0f} MB, "
                                  f"{mbps:,.0f} MB/s")
    return show


def _print(doc: dict[str, Any], path: Path) -> None:
    con = make_console()
    p = doc["pass"]
    colour = {"passed": "green", "failed": "red"}.get(doc["status"], "yellow")
    con.print(f"[bold {colour}]{doc['status'].upper()}[/]  verify {doc['run']}: "
              f"{p['checked']} of {p['blocks']} blocks checked, {p['mbps']:g} MB/s "
              f"({p['bytes'] / 1e6:.1f} MB in {p['seconds']:g}s)")
    sums = p.get("data_files") or {}
    if sums:
        con.print(f"  data files: {sums['checked']:,} of {sums['blocks']:,} blocks in "
                  f"{sums['files']} files checksummed (fio's verify headers): "
                  f"{sums['corrupt']} corrupt, {sums['unreadable']} unreadable")
    for k in PROBLEMS:
        n = p[k.value]
        if not n:
            continue
        offsets = ([f"{w}@{o}" for w, r in p["workloads"].items()
                    for o in r["offsets"].get(k.value, [])]
                   + [f"{o['file']}@{o['offset']}" for r in sums.get("workloads", {}).values()
                      for o in r["offsets"] if o["state"] == k.value])[:10]
        con.print(f"  {k.value}: {n}  first at {', '.join(offsets)}")
    for host, r in (p.get("hosts") or {}).items():
        con.print(f"  {host}: {r.get('status')}, {r.get('checked', 0)} of {r.get('blocks', 0)} "
                  f"blocks checked" + "".join(f", {k.value} {r[k.value]}" for k in PROBLEMS
                                              if r.get(k.value)))
    if p.get("reason"):
        con.print(f"  {p['reason']}")
    con.print(f"result: {path / RESULT}")

"""`assay hosts`: the hosts of an Ansible inventory, checked before a run across them."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from assay.cli.common import scenario_error
from assay.cluster.postgrescheck import check as postgres_check
from assay.console import make_console
from assay.exitcodes import ExitCode
from assay.hosts import inventory
from assay.hosts.check import check_all
from assay.scenario.units import format_size
from assay.scenario.yamlsource import ScenarioInvalid


@click.group("hosts")
def command() -> None:
    """Hosts reached over SSH, from an Ansible inventory (INI or YAML).

    \b
      assay hosts check --hosts inventory.ini
      assay lab create cluster --hosts 3       # a lab of 3 hosts, and its inventory
    """


@command.command("check")
@click.option("--hosts", "hosts_file", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Ansible inventory file (INI or YAML), read with the group_vars/ and "
                   "host_vars/ beside it, as ansible-inventory reads it.")
@click.option("--accept-new", is_flag=True,
              help="Trust a host key seen for the first time and add it to known_hosts "
                   "(StrictHostKeyChecking=accept-new). A changed key is still refused.")
@click.option("--known-hosts", type=click.Path(dir_okay=False),
              help="known_hosts file to verify host keys against (default: the host's "
                   "assay_known_hosts, else ssh's own).")
@click.option("--timeout", default=5, show_default=True, type=click.IntRange(1, 120),
              help="SSH connect timeout per host, in seconds.")
@click.option("--scenario", help="Also check what this scenario needs on the hosts it is "
                                   "placed on: PostgreSQL where it places a postgres workload.")
@click.option("--json", "json_mode", is_flag=True, help="Print one JSON document on stdout.")
def check(hosts_file: Path, accept_new: bool, known_hosts: str | None, timeout: int,
          scenario: str | None, json_mode: bool) -> None:
    """Check every host of an inventory, in parallel: SSH (host key verified), fio and its
    version, python3 (3.9 or newer, for assay's agent: latency from the due time), bash 5
    (fio's close start at an instant; a warning without), clock offset, free space and
    safety of the target; with --scenario, PostgreSQL on the hosts it places a postgres
    workload on.

    Exit status: 0 every host passed, 1 a host failed, 2 invalid input.
    """
    hosts = inventory.load(hosts_file)
    results, warnings = check_all(hosts, accept_new=accept_new, known_hosts=known_hosts,
                                  connect_timeout=timeout)
    if scenario:
        try:
            said = postgres_check(scenario, hosts, accept_new)
        except ScenarioInvalid as invalid:
            raise scenario_error(invalid) from None
        for r in results:
            if said.get(r.host.name):
                r.errors.append(str(said[r.host.name]))
    ok = all(r.ok for r in results)
    if json_mode:
        click.echo(json.dumps({"schema_version": 1, "inventory": str(hosts_file), "ok": ok,
                               "hosts": [r.document() for r in results],
                               "warnings": warnings}, indent=2))
        raise SystemExit(int(ExitCode.PASSED if ok else ExitCode.FAILED))
    con = make_console()
    t = Table(show_edge=False, pad_edge=False)
    for col in ("host", "address", "ssh", "fio", "python", "clock offset", "rtt", "target",
                "free", "result"):
        t.add_column(col, justify="right" if col in ("clock offset", "rtt", "free") else "left")
    for r in results:
        h = r.host
        t.add_row(h.name, f"{h.address}:{h.port}",
                  "[green]ok[/]" if r.reachable else "[red]no[/]", r.fio or "-",
                  r.python or "-",
                  f"{r.offset * 1000:+.2f} ms" if r.offset is not None else "-",
                  f"{r.rtt * 1000:.2f} ms" if r.rtt is not None else "-",
                  h.target or "-", format_size(r.free) if r.free is not None else "-",
                  "[green]PASS[/]" if r.ok else "[red]FAIL[/]")
    con.print(t)
    for r in results:
        for e in r.errors:
            con.print(f"[red]error:[/] {e}", soft_wrap=True)
        for w in r.warnings:
            con.print(f"[yellow]warning:[/] {w}", soft_wrap=True)
    for w in warnings:
        con.print(f"[yellow]warning:[/] {w}", soft_wrap=True)
    passed = sum(r.ok for r in results)
    con.print(f"{passed} of {len(results)} host(s) ready"
              + ("" if ok else "; fix the errors above and check again"))
    raise SystemExit(int(ExitCode.PASSED if ok else ExitCode.FAILED))

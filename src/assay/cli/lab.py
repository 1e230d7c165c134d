"""`assay lab`: btrfs / XFS lab platforms on loop devices (create, list, destroy)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from rich.table import Table

from assay.console import make_console
from assay.exitcodes import UserError
from assay.platforms import lab as labs
from assay.scenario.units import UnitError, format_size, parse_size

root_option = click.option(
    "--dir", "root", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Lab state directory (default: $ASSAY_LAB_DIR or /var/lib/assay/labs).")


@click.group("lab")
def command() -> None:
    """Lab platforms: real btrfs and XFS filesystems on loop devices (needs root).

    \b
      assay lab create btrfs-raid1 --devices 3 --size 1GiB
      assay run rebuild-impact --lab btrfs-raid1
      assay lab destroy btrfs-raid1
    """


@command.command("create")
@click.argument("kind", type=click.Choice(list(labs.KINDS)))
@click.option("--name", help="Lab name (default: the kind).")
@click.option("--devices", default=None, type=int,
              help="Data devices (btrfs-raid1: default 3; others: 1).")
@click.option("--spares", default=None, type=int,
              help="Extra devices for add / replace (btrfs-raid1 default 1).")
@click.option("--size", default="1GiB", show_default=True, help="Size of each device.")
@click.option("--throttle-iops", default=0, type=int,
              help="Cap every device at this many read and write IOPS in runs on this lab "
                   "(a platform of known capacity).")
@click.option("--json", "json_mode", is_flag=True, help="Print the lab's state as JSON.")
@root_option
def create(kind: str, name: str | None, devices: int | None, spares: int | None, size: str,
           throttle_iops: int, json_mode: bool, root: Path | None) -> None:
    """Create a KIND lab (btrfs, btrfs-raid1, xfs), mounted and ready as a run target."""
    try:
        nbytes = parse_size(size)
    except UnitError as e:
        raise UserError(f"--size: {e}") from None
    if throttle_iops < 0:
        raise UserError("--throttle-iops: must be 0 (no cap) or more")
    count = devices if devices is not None else (3 if kind == "btrfs-raid1" else 1)
    lab = labs.create(name or kind, kind, count, nbytes, spares, throttle_iops, root)
    if json_mode:
        click.echo(json.dumps({**lab.__dict__, "target": lab.target()}, indent=2))
        return
    con = make_console()
    con.print(f"[green]lab {lab.name}[/]: {labs.KINDS[kind]}")
    con.print(f"  devices {', '.join(lab.devices)}"
              + (f"  spares {', '.join(lab.spares)}" if lab.spares else "")
              + f"  ({format_size(nbytes)} each)")
    con.print(f"  mounted at {lab.mountpoint}")
    if throttle_iops:
        con.print(f"  runs on it cap each device at {throttle_iops} read + {throttle_iops} "
                  f"write IOPS")
    con.print(f"run a scenario on it:  assay run SCENARIO --lab {lab.name}")
    con.print("or put this target in a scenario:")
    click.echo(lab.snippet())


@command.command("list")
@click.option("--json", "json_mode", is_flag=True, help="Print the labs as JSON.")
@root_option
def list_(json_mode: bool, root: Path | None) -> None:
    """List the labs."""
    found = labs.list_labs(root)
    if json_mode:
        click.echo(json.dumps([{**lab.__dict__, "target": lab.target()} for lab in found],
                              indent=2))
        return
    con = make_console()
    if not found:
        con.print(f"no labs in {root or labs.lab_root()} (`assay lab create btrfs`)")
        return
    t = Table(show_edge=False, pad_edge=False)
    for col in ("name", "kind", "status", "devices", "spares", "size", "used", "cap IOPS",
                "mounted at", "created"):
        t.add_column(col)
    for lab in found:
        t.add_row(lab.name, lab.kind, lab.status, " ".join(lab.devices), " ".join(lab.spares),
                  format_size(lab.size), labs.usage(lab), str(lab.throttle_iops or "-"),
                  lab.mountpoint, time.strftime("%Y-%m-%d %H:%M", time.localtime(lab.created)))
    con.print(t)


@command.command("destroy")
@click.argument("name", required=False)
@click.option("--all", "everything", is_flag=True, help="Destroy every lab.")
@root_option
def destroy(name: str | None, everything: bool, root: Path | None) -> None:
    """Unmount and delete lab NAME (or --all): its loop devices, images and state."""
    if bool(name) == everything:
        raise UserError("give a lab NAME or --all")
    targets = labs.list_labs(root) if everything else [labs.load(str(name), root)]
    con = make_console()
    for lab in targets:
        for line in labs.destroy(lab):
            con.print(f"lab {lab.name}: {line}")
    if not targets:
        con.print("no labs to destroy")

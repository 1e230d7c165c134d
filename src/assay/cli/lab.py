"""`assay lab`: btrfs / XFS lab platforms on loop devices, and lab clusters of hosts in
network namespaces (create, list, destroy)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from rich.table import Table

from assay.console import make_console
from assay.exitcodes import UserError
from assay.platforms import lab as labs
from assay.platforms import labceph, labcephfs, labcluster
from assay.scenario.units import UnitError, format_size, parse_size

root_option = click.option(
    "--dir", "root", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Lab state directory (default: $ASSAY_LAB_DIR or /var/lib/assay/labs).")


@click.group("lab")
def command() -> None:
    """Lab platforms: real btrfs and XFS filesystems on loop devices, and clusters of
    hosts with their own sshd in network namespaces (needs root).

    \b
      assay lab create btrfs-raid1 --devices 3 --size 1GiB
      assay run rebuild-impact --lab btrfs-raid1
      assay lab destroy btrfs-raid1
      assay lab create btrfs-raid1 --faulty --devices 2 --size 2GiB --name faulty
      assay run disk-failure --lab faulty      # a member fails (EIO), replaced by the spare
      assay lab create cluster --hosts 3       # prints its inventory file
      assay hosts check --hosts INVENTORY
      assay lab destroy cluster
      assay lab create ceph --hosts 4          # a hyper-converged Ceph lab (mon, mgr, OSDs)
      assay run ceph-node-failure --lab ceph
      assay lab destroy ceph
    """


@command.command("create")
@click.argument("kind", type=click.Choice([*labs.KINDS, "cluster", "ceph"]))
@click.option("--name", help="Lab name (default: the kind).")
@click.option("--devices", default=None, type=int,
              help="Data devices (btrfs-raid1: default 3; others: 1).")
@click.option("--spares", default=None, type=int,
              help="Extra devices for add / replace (btrfs-raid1 default 1).")
@click.option("--hosts", "hosts", default=None, type=int,
              help="cluster: how many hosts (network namespaces with their own sshd), "
                   "default 3; ceph: hosts with one OSD each, default 4.")
@click.option("--size", default=None,
              help="Size of each device (default 1GiB; cluster: 5GiB per host, a sparse "
                   "image holding the built-in cluster scenarios' 4GiB per host).")
@click.option("--throttle-iops", default=0, type=int,
              help="Cap every device at this many read and write IOPS in runs on this lab "
                   "(a platform of known capacity).")
@click.option("--faulty", is_flag=True,
              help="Serve the devices through a fault server (FUSE), so that steps can fail, "
                   "slow, corrupt and heal them: `device` op fail|slow|corrupt|heal.")
@click.option("--cephfs", is_flag=True,
              help="ceph: also a metadata server and a CephFS, mounted with ceph-fuse at "
                   "<lab>/cephfs (a `ceph` target's `path`).")
@click.option("--json", "json_mode", is_flag=True, help="Print the lab's state as JSON.")
@root_option
def create(kind: str, name: str | None, devices: int | None, spares: int | None,
           hosts: int | None,
           size: str | None, throttle_iops: int, faulty: bool, cephfs: bool, json_mode: bool,
           root: Path | None) -> None:
    """Create a KIND lab (btrfs, btrfs-raid1, xfs), mounted and ready as a run target; or a
    `cluster` of --hosts hosts reached over SSH, with its Ansible inventory."""
    if kind == "ceph":
        if faulty or size or devices is not None or throttle_iops:
            raise UserError("a ceph lab takes --hosts, --name and --cephfs only")
        _create_ceph(name or kind, 4 if hosts is None else hosts, cephfs, json_mode, root)
        return
    if cephfs:
        raise UserError("--cephfs is for a ceph lab")
    try:
        nbytes = parse_size(size) if size else \
            labcluster.DEFAULT_SIZE if kind == "cluster" else 1 << 30
    except UnitError as e:
        raise UserError(f"--size: {e}") from None
    if kind == "cluster":
        if faulty:
            raise UserError("--faulty is for btrfs, btrfs-raid1 and xfs labs")
        _create_cluster(name or kind, 3 if hosts is None else hosts, nbytes, json_mode,
                        root)
        return
    if throttle_iops < 0:
        raise UserError("--throttle-iops: must be 0 (no cap) or more")
    count = devices if devices is not None else (3 if kind == "btrfs-raid1" else 1)
    lab = labs.create(name or kind, kind, count, nbytes, spares, throttle_iops, root, faulty)
    if json_mode:
        click.echo(json.dumps({**lab.__dict__, "target": lab.target()}, indent=2))
        return
    con = make_console()
    con.print(f"[green]lab {lab.name}[/]: {labs.KINDS[kind]}")
    con.print(f"  devices {', '.join(lab.devices)}"
              + (f"  spares {', '.join(lab.spares)}" if lab.spares else "")
              + f"  ({format_size(nbytes)} each)")
    con.print(f"  mounted at {lab.mountpoint}")
    if faulty:
        con.print(f"  faulty: served by a fault server (pid {lab.fuse_pid}) at {lab.fuse_mount}"
                  f"; steps can `device` fail / slow / corrupt / heal them")
    if throttle_iops:
        con.print(f"  runs on it cap each device at {throttle_iops} read + {throttle_iops} "
                  f"write IOPS")
    con.print(f"run a scenario on it:  assay run SCENARIO --lab {lab.name}")
    con.print("or put this target in a scenario:")
    click.echo(lab.snippet())


def _create_cluster(name: str, hosts: int, nbytes: int, json_mode: bool,
                    root: Path | None) -> None:
    if nbytes < 64 << 20:
        raise UserError("--size: a cluster host's filesystem needs 64MiB or more")
    started = time.monotonic()
    c = labcluster.create(name, hosts, nbytes, root)
    if json_mode:
        click.echo(json.dumps(labcluster.summary(c), indent=2))
        return
    con = make_console()
    con.print(f"[green]lab cluster {c.name}[/]: {len(c.hosts)} host(s) on {c.subnet}.0/24, "
              f"sshd in network namespaces ({time.monotonic() - started:.1f}s)")
    for h in c.hosts:
        con.print(f"  {h.name}  {h.address}  namespace {h.netns}  target {h.path} "
                  f"({format_size(c.size)} ext4 on {h.loop})")
    con.print(f"check them:  assay hosts check --hosts {c.inventory}")
    con.print("the inventory:")
    click.echo(c.inventory)


def _create_ceph(name: str, hosts: int, cephfs: bool, json_mode: bool,
                 root: Path | None) -> None:
    c, lab = (labcephfs.create if cephfs else labceph.create)(name, hosts, root)
    if json_mode:
        click.echo(json.dumps(labceph.summary(c, lab), indent=2))
        return
    con = make_console()
    con.print(f"[green]lab ceph {c.name}[/]: {len(c.hosts)} hosts on {c.subnet}.0/24, "
              f"HEALTH_OK in {lab.bringup_s:.1f}s; mon and mgr on {c.hosts[0].name}, pool "
              f"{lab.pool} (size 3, min_size 2), cephx")
    for h in c.hosts:
        con.print(f"  {h.name}  {h.address}  namespace {h.netns}  osd.{lab.osds[h.name]}")
    if lab.cephfs:
        con.print(f"  CephFS (MDS on {c.hosts[0].name}) mounted with ceph-fuse at {lab.cephfs}")
    con.print(f"run a scenario on it:  assay run ceph-node-failure --lab {c.name}")
    con.print("the inventory and the ceph.conf:")
    click.echo(c.inventory)
    click.echo(lab.conf)


@command.command("list")
@click.option("--json", "json_mode", is_flag=True, help="Print the labs as JSON.")
@root_option
def list_(json_mode: bool, root: Path | None) -> None:
    """List the labs."""
    found = labs.list_labs(root)
    clusters = labcluster.list_clusters(root)
    if json_mode:
        click.echo(json.dumps([{**lab.__dict__, "target": lab.target()} for lab in found]
                              + [labcluster.summary(c) for c in clusters], indent=2))
        return
    con = make_console()
    if clusters:
        ct = Table(show_edge=False, pad_edge=False)
        for col in ("cluster", "status", "hosts", "subnet", "inventory", "created"):
            ct.add_column(col, overflow="fold")
        for c in clusters:
            ct.add_row(c.name, c.status, " ".join(h.name for h in c.hosts), f"{c.subnet}.0/24",
                       c.inventory, time.strftime("%Y-%m-%d %H:%M", time.localtime(c.created)))
        con.print(ct)
        if not found:
            return
    if not found:
        con.print(f"no labs in {root or labs.lab_root()} (`assay lab create btrfs`)")
        return
    t = Table(show_edge=False, pad_edge=False)
    for col in ("name", "kind", "status", "devices", "spares", "size", "used", "cap IOPS",
                "mounted at", "created"):
        t.add_column(col)
    for lab in found:
        t.add_row(lab.name, lab.kind + (" (faulty)" if lab.faulty else ""), lab.status,
                  " ".join(lab.devices), " ".join(lab.spares),
                  format_size(lab.size), labs.usage(lab), str(lab.throttle_iops or "-"),
                  lab.mountpoint, time.strftime("%Y-%m-%d %H:%M", time.localtime(lab.created)))
    con.print(t)


@command.command("destroy")
@click.argument("name", required=False)
@click.option("--all", "everything", is_flag=True, help="Destroy every lab.")
@root_option
def destroy(name: str | None, everything: bool, root: Path | None) -> None:
    """Unmount and delete lab NAME (or --all): its loop devices, images and state; for a
    cluster also its namespaces, links, sshd processes and keys."""
    if bool(name) == everything:
        raise UserError("give a lab NAME or --all")
    con = make_console()
    clusters = labcluster.list_clusters(root) if everything else \
        [labcluster.load(str(name), root)] if labcluster.is_cluster(str(name), root) else []
    for c in clusters:
        gone = labceph.destroy if labceph.is_ceph(c.name, Path(c.root).parent) \
            else labcluster.destroy
        for line in gone(c):
            con.print(f"lab {c.name}: {line}")
    if clusters and not everything:
        return
    targets = labs.list_labs(root) if everything else [labs.load(str(name), root)]
    for lab in targets:
        for line in labs.destroy(lab):
            con.print(f"lab {lab.name}: {line}")
    if not targets and not clusters:
        con.print("no labs to destroy")

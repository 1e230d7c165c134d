"""Where the verbs that run trials (search, sweep) run: --hosts, --lab (a lab platform, a lab
cluster or a Ceph lab) and --path, as `assay run` reads them; each trial is then a run on
those hosts (a cluster run) or that target."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from assay.cli.common import hosts_options
from assay.exitcodes import UserError
from assay.hosts import inventory
from assay.hosts.inventory import Host
from assay.plan import Plan, ScenarioFile, TargetEdit
from assay.platforms import cephtarget, labceph, labcluster
from assay.platforms import lab as labs
from assay.run_options import RunnerFactory
from assay.runners.ssh import ssh_runner
from assay.scenario.models import Target


def placement_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--lab, then --hosts and --accept-new."""
    f = hosts_options(f)
    return click.option("--lab", "lab_name", help="Run every trial on lab NAME (`assay lab "
                        "create`): a lab platform replaces the scenario's target; a lab "
                        "cluster's hosts make each trial a cluster run, as with --hosts.")(f)


def lab_place(value: str) -> tuple[str, Path | None]:
    """--lab's value: a lab's name under the lab root, or the directory of a lab made with
    `assay lab create --dir` (a path): (its name, its root)."""
    if "/" not in value:
        return value, None
    path = Path(value).resolve()
    return path.name, path.parent


def target_edit(lab_name: str | None, target_path: str | None,
                lab_root: Path | None = None) -> TargetEdit | None:
    """--lab and --path, applied to the scenario's target."""
    if not lab_name and not target_path:
        return None
    lab = labs.load(lab_name, lab_root) if lab_name else None

    def edit(target: Target) -> None:
        if lab is not None:
            labs.apply(target, lab)
        if target_path:
            target.path = target_path
            target.device = None

    return edit


@dataclass
class Placement:
    hosts: list[Host] | None = None
    target: TargetEdit | None = None
    accept_new: bool = False

    @classmethod
    def read(cls, hosts_file: Path | None, lab_name: str | None, target_path: str | None,
             accept_new: bool, with_path: bool = False) -> Placement:
        """`with_path`: --path edits the target too (run; search and sweep place it per
        trial themselves)."""
        lab_name, root = lab_place(lab_name) if lab_name else (None, None)
        if lab_name and labcluster.is_cluster(lab_name, root):  # a lab cluster: its inventory
            if hosts_file or target_path:
                raise UserError(f"--lab {lab_name} is a lab cluster: it gives the hosts and "
                                f"their paths; leave out --hosts and --path")
            hosts_file, lab_name = Path(labcluster.load(lab_name, root).inventory), None
        hosts = inventory.load(hosts_file) if hosts_file else None
        if lab_name and hosts is None and labceph.is_ceph(lab_name, root):  # its hosts
            hosts, lab_name = inventory.load(labceph.inventory_of(lab_name, root)), None
        if hosts is not None and (target_path or lab_name):
            raise UserError("--hosts runs on each host's assay_path: leave out --path and --lab")
        return cls(hosts, target_edit(lab_name, target_path if with_path else None, root),
                   accept_new)

    def runner(self) -> RunnerFactory | None:
        """The trials' runner factory on hosts (None: the engine's default)."""
        if self.hosts is None:
            return None
        return functools.partial(ssh_runner, self.hosts, accept_new=self.accept_new)

    def key(self, lab_name: str | None) -> dict[str, Any]:
        """What makes two searches placed alike (for resuming): the lab, or each host, its
        address and target; nothing when neither is given (the key stays as it was)."""
        out: dict[str, Any] = {"lab": lab_name} if lab_name else {}
        if self.hosts is not None:
            out["hosts"] = [[h.name, h.address, h.target] for h in self.hosts]
        return out

    def where(self, plan: Plan) -> str:
        if plan.cluster is None:
            return ""
        return f"on {len(plan.cluster.hosts)} hosts: " + ", ".join(
            f"{h}:{hp.host.target}" for h, hp in plan.cluster.hosts.items())


class PlacedScenario(ScenarioFile):
    """A scenario every plan of which is placed: on the hosts, or the lab's target."""

    def __init__(self, scn: ScenarioFile, placement: Placement):
        super().__init__(scn.text, scn.file, scn.base_dir)
        self.placement = placement

    def plan(self, overrides: Any, duration: float | None = None, graded: bool = True,
             warmup: float | None = None, target: TargetEdit | None = None,
             hosts: list[Host] | None = None) -> Plan:
        target = target or self.placement.target
        hosts = hosts or self.placement.hosts
        if target is None and hosts is not None:  # a ceph scenario's cluster, from them
            target = cephtarget.from_inventory(hosts)
        return super().plan(overrides, duration, graded, warmup, target, hosts)

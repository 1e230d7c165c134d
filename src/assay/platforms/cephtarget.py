"""Ceph targets from outside a run: an inventory's `assay_ceph_*` variables, and the images a
crashed run left (`assay clean`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.hosts.inventory import Host
from assay.platforms.ceph import Driver
from assay.platforms.fsbase import ActionFailed, run_command
from assay.scenario.models import Target

CLEAN_S = 30.0  # per command while cleaning up after a crashed run
INVENTORY_VARS = ("conf", "keyring", "pool", "client", "lab")  # assay_ceph_<key>


def from_inventory(hosts: list[Host] | None) -> Callable[[Target], None] | None:
    """A target edit: a `ceph` scenario's missing options from the inventory's
    `assay_ceph_conf`, `_keyring`, `_pool`, `_client` (and a lab's `_lab`) variables."""
    given = {k: v for k in INVENTORY_VARS if hosts
             and (v := hosts[0].vars.get(f"assay_ceph_{k}")) is not None}
    if not given:
        return None

    def edit(target: Target) -> None:
        if target.platform == "ceph":
            target.options = {**given, **target.options}

    return edit


def clean_crashed(facts: dict[str, Any]) -> list[str]:
    """The images a crashed run created (run.json `target.driver`), removed if they are still
    assay's and no client holds them any more. Those gone are taken off `facts["created"]`
    (the caller keeps the record), so a cluster that is gone is asked once, briefly."""
    created = list(facts.get("created") or [])
    if facts.get("platform") != "ceph" or not created:
        return []
    if not Path(str(facts.get("conf") or "/etc/ceph/ceph.conf")).exists():
        facts["created"] = []  # the cluster's configuration is gone (a destroyed lab)
        return [f"forgot {len(created)} RBD image(s): {facts.get('conf')} is gone"]
    d = Driver(Target(platform="ceph", options={k: facts.get(k) for k in (
        "conf", "keyring", "pool", "client")}))

    def bounded(cmd: Sequence[str] | str) -> str:
        return run_command(cmd, timeout=CLEAN_S)  # never hold up `assay run` for long

    try:
        present = set(json.loads(d.rbd("ls", "-p", d.pool, "--format", "json", run=bounded)))
    except (ActionFailed, ValueError) as e:
        return [f"cannot list the crashed run's RBD images: {e}"]
    done = []
    for spec in created:
        if spec.split("/", 1)[-1] not in present:
            facts["created"].remove(spec)
            continue
        try:
            d._reuse(spec, force=False)  # removes an image of assay's that nobody holds
            facts["created"].remove(spec)
            done.append(f"removed RBD image {spec}")
        except (UserError, ActionFailed) as e:
            done.append(f"kept RBD image {spec}: {e}")
    return done

"""A Ceph run's RBD images (platforms/ceph.py): created before any IO, refused unless assay
made them (image-meta `assay.owner`) or `--force`, removed with their snapshots at the end;
and its snapshots, of the images or in a CephFS directory's `.snap`.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.platforms import cephscrub, rbdjobs
from assay.platforms.cephclient import CephClient
from assay.platforms.fsbase import ActionFailed, Runner, run_command

OWNER = "assay.owner"
WATCH_S = 45.0  # how long a leftover image's watchers may take to lapse


class CephImages(CephClient):
    """The images and snapshots a run makes, and their removal whatever ended it."""

    # -- a run's images ---------------------------------------------------------------------
    def open_hosts(self, scenario: str, files: list[tuple[str, int]],
                   force: bool) -> dict[str, str]:
        """Create this run's images, before any IO; refuse those assay did not make."""
        if not rbdjobs.on_rbd(self.target):
            return {}
        try:
            pools = json.loads(self.ceph("osd", "pool", "ls", "detail", "-f", "json"))
        except (ActionFailed, ValueError) as e:
            raise UserError(f"ceph: cannot reach the cluster with {self.conf} (client "
                            f"{self.client}): {e}") from None
        pool = next((p for p in pools if p.get("pool_name") == self.pool), None)
        if pool is None:
            raise UserError(f"ceph: there is no pool {self.pool!r} (target.options.pool)")
        owner = (pool.get("application_metadata") or {}).get("rbd", {}).get("owner")
        if owner != "assay" and not force:
            raise UserError(f"ceph: pool {self.pool} was not made for assay: give --force to "
                            f"create images in it (assay removes only those it creates), or "
                            f"mark it: ceph osd pool application set {self.pool} rbd owner "
                            f"assay")
        existing = set(json.loads(self.rbd("ls", "-p", self.pool, "--format", "json")))
        for image, size in rbdjobs.images(scenario, files).items():
            spec = f"{self.pool}/{image}"
            if image not in existing or self._reuse(spec, force):
                self.rbd("create", "--size", f"{size >> 20}M", "--image-feature", "layering",
                         spec)
                self.created.append(spec)
                self.rbd("image-meta", "set", spec, OWNER, "assay")
            self.images[spec] = size
        return self.fio_env()

    def _reuse(self, spec: str, force: bool) -> bool:
        """An image of this name is there: a crashed run's (removed: True, to be made anew)
        or someone's (refused, or with --force written over and kept: False)."""
        try:
            mine = self.rbd("image-meta", "get", spec, OWNER) == "assay"
        except ActionFailed:
            mine = False
        if not mine:
            if not force:
                raise UserError(f"ceph: image {spec} exists and assay did not create it: "
                                f"give --force to write over it (it is then kept)")
            return False
        end = time.monotonic() + WATCH_S  # a crashed client's watch lapses within 30 s
        while watchers := self._watchers(spec):
            if time.monotonic() > end:
                raise UserError(f"ceph: image {spec} is in use ({len(watchers)} client(s)): "
                                f"is another run of this scenario going on?")
            time.sleep(2)
        self._remove(spec)
        return True

    def _watchers(self, spec: str) -> list[dict[str, Any]]:
        data = json.loads(self.rbd("status", spec, "--format", "json"))
        return list(data.get("watchers") or [])

    def _remove(self, spec: str) -> None:
        """An image of this run, with its snapshots. Clients of this run still holding it
        (fio on a host that was lost mid-run and came back) are blocklisted first: `rbd rm`
        refuses a watched image, and only this run's fio opened it."""
        with contextlib.suppress(ActionFailed):
            self.rbd("snap", "purge", spec)
        try:
            self.rbd("rm", "--no-progress", spec)
            return
        except ActionFailed:
            watchers = self._watchers(spec)
            if not watchers:
                raise
        for w in watchers:
            self.ceph("osd", "blocklist", "add", str(w["address"]), "600")
        self.blocklisted += [str(w["address"]) for w in watchers]
        self.rbd("rm", "--no-progress", spec)

    def cleanup(self, keep: bool) -> None:
        """The snapshots and images this run created go, whatever ended it (and a read error
        it planted is switched off and repaired)."""
        if self.injected:
            with contextlib.suppress(ActionFailed, ValueError):
                cephscrub.repair(self, run_command)
        if not rbdjobs.on_rbd(self.target):
            for name in list(self.created_snapshots):
                with contextlib.suppress(ActionFailed):
                    self.snapshot_delete(run_command, name)
        for spec in list(self.created):
            with contextlib.suppress(ActionFailed):
                self._remove(spec)
                self.created.remove(spec)
        self.created_snapshots.clear()

    # -- snapshots --------------------------------------------------------------------------
    def snapshot_create(self, run: Runner, name: str) -> str:
        if not rbdjobs.on_rbd(self.target):  # a CephFS snapshot: a directory in .snap
            out = run(["mkdir", str(Path(self._cephfs()) / ".snap" / name)])
            self.created_snapshots.append(name)
            return out or f"CephFS snapshot {self._cephfs()}/.snap/{name}"
        for spec in self.images:
            self.rbd("snap", "create", f"{spec}@{name}", run=run)
        self.created_snapshots.append(name)
        return f"rbd snap create {name} on {len(self.images)} image(s)"

    def snapshot_delete(self, run: Runner, name: str) -> str:
        if not rbdjobs.on_rbd(self.target):
            out = run(["rmdir", str(Path(self._cephfs()) / ".snap" / name)])
        else:
            for spec in self.images:
                self.rbd("snap", "rm", "--no-progress", f"{spec}@{name}", run=run)
            out = f"rbd snap rm {name} on {len(self.images)} image(s)"
        if name in self.created_snapshots:
            self.created_snapshots.remove(name)
        return out

    def _cephfs(self) -> str:
        path = self.target.options.get("cephfs") or self.target.path
        if not path:
            raise ActionFailed("a CephFS snapshot needs target.options.cephfs: the directory "
                               "as mounted on this machine")
        return str(path)

"""Ceph: RBD images driven by fio's rbd engine on each host, and the cluster's own operations.

    target: {platform: ceph, options: {conf: /etc/ceph/ceph.conf, pool: assay, client: admin}}

(`assay run ... --lab ceph` and an inventory's `assay_ceph_*` variables fill these in.)
Each workload instance gets its own image (platforms/rbdjobs.py), created before the prefill
and removed, with its snapshots, when the run ends. assay writes only into images it created
(image-meta `assay.owner`) in a pool made for it (application metadata `rbd owner=assay`, as
the lab sets); anything else is refused before any IO unless `--force`, and then never removed.
With a `path` the target is a CephFS directory, driven like any other (snapshots in `.snap`).

Operations, each one of Ceph's own commands:
  snapshot          rbd snap create POOL/IMAGE@NAME on each image of the run
  device fail       the OSD stops (lab: killed; elsewhere `options.osd_stop`), ceph osd out N
  device remove     ceph osd out N (its data moves off; the daemon keeps running)
  device recover    ceph osd in N, then the OSD starts (lab, or `options.osd_start`)
  scrub             ceph osd pool deep-scrub POOL; done when every PG's deep-scrub stamp moved
  scrub corrupt     a read error planted in one copy, found by a deep-scrub (platforms/cephscrub)
  scrub repair      ceph pg repair on each inconsistent PG
  rebuild           waits until every PG is active+clean (after a non-clean state was seen:
                    PG stats lag a map change by seconds), recording the recovery time
  throttle          recovery and backfill limits (ceph config set osd ...), restored after

The driver's parts: platforms/cephclient.py (options and commands), cephimages.py (the run's
images and snapshots), cephoperations.py (OSDs, scrub, rebuild, throttle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from assay.exitcodes import UserError
from assay.platforms import cephstate, rbdjobs
from assay.platforms.cephimages import CephImages
from assay.platforms.cephoperations import CephOperations

CEPHFS = ("ceph", "fuse.ceph-fuse")  # the kernel client's and ceph-fuse's fstype


class Driver(CephImages, CephOperations):
    name: ClassVar[str] = "ceph"
    actions: ClassVar[frozenset[str]] = frozenset({
        "snapshot", "snapshot.delete", "device.fail", "device.remove", "device.recover",
        "scrub", "rebuild", "done.rebuild", "done.scrub", "throttle.recovery", "scrub.corrupt",
        "scrub.repair"})

    def prepare(self) -> Path:
        if rbdjobs.on_rbd(self.target):
            raise UserError("a ceph target on RBD runs fio on hosts: give --lab NAME (`assay "
                            "lab create ceph`) or --hosts FILE; or give target.path, a CephFS "
                            "directory")
        self.check_target()
        return super().prepare()

    def check_target(self) -> Path:
        """A `path` is a directory on a mounted CephFS (kernel client or ceph-fuse)."""
        path = super().check_target()
        if self.mount.get("fstype") not in CEPHFS:
            raise UserError(f"target.path {path} is on {self.mount.get('fstype') or 'unknown'}"
                            f", not CephFS (platform ceph: mount it with ceph-fuse or mount -t "
                            f"ceph; or leave out the path to drive RBD images)")
        return path

    def watch(self, run_dir: Path) -> cephstate.CephWatch:
        return cephstate.CephWatch(run_dir, self.conf, self.client, self.keyring)

    def facts(self) -> dict[str, Any]:
        return {"platform": self.name, "conf": self.conf, "keyring": self.keyring,
                "pool": self.pool, "client": self.client, "images": self.images,
                "created": self.created}

    def variables(self) -> dict[str, Any]:
        return {**super().variables(), "pool": self.pool, "conf": self.conf}

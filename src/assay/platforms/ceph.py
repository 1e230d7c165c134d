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
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any, ClassVar

from assay.exitcodes import UserError
from assay.platforms import cephscrub, cephstate, labceph, labcluster, rbdjobs
from assay.platforms.fsbase import ActionFailed, FsPlatform, Runner, run_command
from assay.scenario.models import Target

OWNER = "assay.owner"
WATCH_S = 45.0  # how long a leftover image's watchers may take to lapse
SETTLE_S = 60.0  # nothing seen to recover this long after a failure: there was nothing to do
CEPHFS = ("ceph", "fuse.ceph-fuse")  # the kernel client's and ceph-fuse's fstype
RECOVERY_KEYS = {"backfills": "osd_max_backfills", "recovery_active": "osd_recovery_max_active",
                 "recovery_sleep": "osd_recovery_sleep_hdd"}


class Driver(FsPlatform):
    name: ClassVar[str] = "ceph"
    actions: ClassVar[frozenset[str]] = frozenset({
        "snapshot", "snapshot.delete", "device.fail", "device.remove", "device.recover",
        "scrub", "rebuild", "done.rebuild", "done.scrub", "throttle.recovery", "scrub.corrupt",
        "scrub.repair"})

    def __init__(self, target: Target):
        super().__init__(target)
        o = target.options
        self.conf = str(o.get("conf") or "/etc/ceph/ceph.conf")
        self.keyring = str(o.get("keyring") or "")
        self.pool = str(o.get("pool") or "rbd")
        self.client = str(o.get("client") or "admin")
        self.images: dict[str, int] = {}  # this run's images -> size
        self.created: list[str] = []  # ... of which assay made these (removed at the end)
        self._rebuild: dict[str, Any] = {}
        self._scrub: dict[str, str] = {}
        self.blocklisted: list[str] = []  # this run's own stale clients (see _remove)
        self.injected: set[int] = set()  # OSDs with a planted read error (platforms/cephscrub)

    # -- commands ---------------------------------------------------------------------------
    def _auth(self) -> list[str]:
        return ["-c", self.conf, "--id", self.client] + (
            ["--keyring", self.keyring] if self.keyring else [])

    def ceph(self, *args: str, run: Runner = run_command) -> str:
        return run(["ceph", *self._auth(), "--connect-timeout", "20", *args])

    def rbd(self, *args: str, run: Runner = run_command) -> str:
        return run(["rbd", *self._auth(), *args])

    def rados(self, *args: str, run: Runner = run_command) -> str:
        return run(["rados", *self._auth(), "-p", self.pool, *args])

    def status(self, run: Runner = run_command) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.ceph("status", "-f", "json", run=run))
        return data

    def fio_env(self) -> dict[str, str]:
        """What fio's rbd engine (librados) reads on each host: the cluster's ceph.conf."""
        return {"CEPH_CONF": self.conf}

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

    def watch(self, run_dir: Path) -> cephstate.CephWatch:
        return cephstate.CephWatch(run_dir, self.conf, self.client, self.keyring)

    def facts(self) -> dict[str, Any]:
        return {"platform": self.name, "conf": self.conf, "keyring": self.keyring,
                "pool": self.pool, "client": self.client, "images": self.images,
                "created": self.created}

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

    # -- OSDs -------------------------------------------------------------------------------
    def devices(self) -> list[str]:
        with contextlib.suppress(ActionFailed, ValueError):
            return [f"osd.{i}" for i in json.loads(self.ceph("osd", "ls", "-f", "json"))]
        return []

    def device_op(self, run: Runner, op: str, device: str, new_device: str | None) -> str:
        osd = device.removeprefix("osd.")
        if not osd.isdigit():
            raise ActionFailed(f"{device!r} is not an OSD (osd.N)")
        out: list[str] = []
        if op == "fail":
            out.append(self._daemon(run, "stop", int(osd)))
            out.append(self.ceph("osd", "out", osd, run=run))
        elif op == "remove":
            out.append(self.ceph("osd", "out", osd, run=run))
        elif op == "recover":  # in first: a restart after a crash can take 30 s or more
            out.append(self.ceph("osd", "in", osd, run=run))
            out.append(self._daemon(run, "start", int(osd)))
        else:
            raise ActionFailed(f"platform ceph cannot {op} an OSD (fail, remove, recover)")
        return "\n".join(o for o in out if o)

    def _daemon(self, run: Runner, what: str, osd: int) -> str:
        """Stop or start an OSD daemon: the lab does it; elsewhere options.osd_stop/start."""
        lab_dir = self.target.options.get("lab")
        if lab_dir:
            lab = labceph.load_dir(Path(str(lab_dir)))
            if what == "stop":
                return f"osd.{osd} killed" if labceph.stop_daemon(lab, f"osd.{osd}") \
                    else f"osd.{osd} was not running"
            host = next(h for h, i in lab.osds.items() if i == osd)
            c = labcluster.load(Path(lab.root).name, Path(lab.root).parent)
            labceph.start_osd(lab, c.host(host).netns, osd)
            return f"osd.{osd} started on {host}"
        template = self.target.options.get(f"osd_{what}")
        if not template:
            return f"no options.osd_{what} command: osd.{osd} only marked " \
                   f"{'out' if what == 'stop' else 'in'}"
        try:
            return run(str(template).format(id=osd, osd=f"osd.{osd}"))
        except (KeyError, IndexError, ValueError) as e:
            raise ActionFailed(f"target.options.osd_{what}: {template!r}: {e} (it sees {{id}} "
                               f"and {{osd}})") from None

    # -- background operations: scrub, rebuild ---------------------------------------------
    def operation(self, run: Runner, what: str) -> str:
        if what == "scrub":
            self._scrub = self._deep_stamps(run)
            out = self.ceph("osd", "pool", "deep-scrub", self.pool, run=run)
            return out or f"deep-scrub of pool {self.pool} ({len(self._scrub)} PGs) asked"
        if what == "rebuild":
            self._rebuild = {"t0": time.monotonic(), "moved": False, "clean": 0}
            return "waiting for every PG to be active+clean"
        if what == "scrub.corrupt":
            return cephscrub.corrupt(self, run)
        if what == "scrub.repair":
            return cephscrub.repair(self, run)
        raise ActionFailed(f"platform ceph cannot {what}")

    def busy(self, run: Runner, what: str) -> bool:
        details: dict[str, Any] = getattr(run, "details", {})
        if what == "scrub":
            left = [pg for pg, stamp in self._deep_stamps(run).items()
                    if self._scrub.get(pg) == stamp]
            details["pgs_left"] = len(left)
            return bool(left)
        if what == "rebuild":
            r = self._rebuild or {"t0": time.monotonic(), "moved": False, "clean": 0}
            self._rebuild = r
            st = self.status(run)
            r["moved"] = r["moved"] or cephstate.recovering(st)
            r["clean"] = r["clean"] + 1 if cephstate.clean(st) else 0
            details["last_state"] = ", ".join(  # what the step last saw, in its event
                f"{s['count']} {s['state_name']}" for s in st.get("pgmap", {}).get(
                    "pgs_by_state", [])) + f"; {st.get('health', {}).get('status')}"
            waited = time.monotonic() - r["t0"]
            # Ceph notices a lost node only after the heartbeat grace (20 s): clean until then
            # is stale, so done once copies were seen missing and then clean twice in a row
            if r["clean"] < 2 or (not r["moved"] and waited < SETTLE_S):
                return True
            details["recovery_s"] = round(waited, 1)
            details["health"] = st.get("health", {}).get("status")
            return False
        raise ActionFailed(f"platform ceph cannot tell whether a {what} is running")

    def _deep_stamps(self, run: Runner) -> dict[str, str]:
        data = json.loads(self.ceph("pg", "ls-by-pool", self.pool, "-f", "json", run=run))
        stats = data.get("pg_stats", data) if isinstance(data, dict) else data
        return {p["pgid"]: p.get("last_deep_scrub_stamp", "") for p in stats}

    def recovery_limits(self, run: Runner, limits: dict[str, float]) -> dict[str, str]:
        """Set `ceph config` recovery limits for the OSDs; returns the values they replace."""
        before = {}
        for key, value in limits.items():
            option = RECOVERY_KEYS[key]
            before[option] = self.ceph("config", "get", "osd", option, run=run).strip()
            self.ceph("config", "set", "osd", option, f"{value:g}", run=run)
        return before

    def restore_limits(self, run: Runner, before: dict[str, str]) -> None:
        for option, value in before.items():
            self.ceph("config", "set", "osd", option, value, run=run)

    def variables(self) -> dict[str, Any]:
        return {**super().variables(), "pool": self.pool, "conf": self.conf}


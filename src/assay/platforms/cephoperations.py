"""A Ceph run's cluster operations (platforms/ceph.py): an OSD failed, removed or recovered;
a deep-scrub and a rebuild, with whether they are still running; recovery limits set and
restored.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from assay.platforms import cephscrub, cephstate, labceph, labcluster
from assay.platforms.cephclient import CephClient
from assay.platforms.fsbase import ActionFailed, Runner

SETTLE_S = 60.0  # nothing seen to recover this long after a failure: there was nothing to do
RECOVERY_KEYS = {"backfills": "osd_max_backfills", "recovery_active": "osd_recovery_max_active",
                 "recovery_sleep": "osd_recovery_sleep_hdd"}


class CephOperations(CephClient):
    """OSDs, scrubs, rebuilds and recovery limits, each one of Ceph's own commands."""

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
            # Ceph notices a lost node only after the heartbeat grace (20 s by default): clean
            # until then is stale, so done once copies were seen missing, then clean twice
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

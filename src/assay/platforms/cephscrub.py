"""A scrub error planted, found and repaired on Ceph (`scrub` with `corrupt` or `repair`):

    - {name: corrupt, action: scrub, corrupt: true, at: 30s, timeout: 3m}
    - {name: repair, action: scrub, repair: true, after: corrupt, timeout: 3m}

corrupt: a read error is planted in the first object of the run's first image on one replica
(the last OSD of its acting set, not the primary) with bluestore's debug injection
(`ceph tell osd.N config set bluestore_debug_inject_read_err true`, `ceph tell osd.N
injectdataerr POOL OBJECT`), then that object's PG is deep-scrubbed; the step lasts until
scrub flags the PG inconsistent (HEALTH_ERR: OSD_SCRUB_ERRORS, PG_DAMAGED) and its event names
the PG, the object, the OSD and what scrub found. repair: `ceph pg repair` on every
inconsistent PG of the pool, lasting until none is left; the injection is switched off.
Only for test clusters: it damages one copy on purpose (Ceph repairs it from the others).
"""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

from assay.platforms.fsbase import ActionFailed, Runner, run_command


class Driver(Protocol):
    """What scrub's corrupt and repair use of the Ceph driver (platforms/ceph.py)."""

    pool: str
    images: dict[str, int]
    injected: set[int]

    def ceph(self, *args: str, run: Runner = run_command) -> str: ...
    def rbd(self, *args: str, run: Runner = run_command) -> str: ...
    def rados(self, *args: str, run: Runner = run_command) -> str: ...

WAIT_S = 150.0  # a deep-scrub of one PG: seconds idle, a minute or more under load
INJECT = "bluestore_debug_inject_read_err"


def corrupt(d: Driver, run: Runner) -> str:
    details: dict[str, Any] = getattr(run, "details", {})
    if not d.images:
        raise ActionFailed("scrub corrupt: the run has no RBD image to plant an error in")
    spec = next(iter(d.images))
    info = json.loads(d.rbd("info", spec, "--format", "json", run=run))
    obj = f"{info['block_name_prefix']}.{0:016x}"
    where = json.loads(d.ceph("osd", "map", d.pool, obj, "-f", "json", run=run))
    pg, osd = str(where["pgid"]), int(where["acting"][-1])
    details.update({"pg": pg, "object": obj, "osd": f"osd.{osd}"})
    d.ceph("tell", f"osd.{osd}", "config", "set", INJECT, "true", run=run)
    d.ceph("tell", f"osd.{osd}", "injectdataerr", d.pool, obj, run=run)
    d.injected.add(osd)
    d.ceph("pg", "deep-scrub", pg, run=run)
    end = time.monotonic() + WAIT_S
    while pg not in inconsistent(d, run):
        if time.monotonic() > end:
            raise ActionFailed(f"deep-scrub of pg {pg} did not find the error planted in {obj} "
                               f"on osd.{osd} within {WAIT_S:.0f}s")
        time.sleep(2)
    found = sorted({e for i in json.loads(d.rados("list-inconsistent-obj", pg, "--format=json",
                                                  run=run)).get("inconsistents", [])
                    for e in i.get("union_shard_errors", [])})
    details["found"] = found
    return (f"read error planted in {obj} on osd.{osd}; deep-scrub of pg {pg} found it: "
            f"pg {pg} inconsistent ({', '.join(found) or 'scrub errors'})")


def repair(d: Driver, run: Runner) -> str:
    details: dict[str, Any] = getattr(run, "details", {})
    for osd in sorted(d.injected):  # no more planted errors: the repair reads every copy
        d.ceph("tell", f"osd.{osd}", "config", "set", INJECT, "false", run=run)
    d.injected.clear()
    pgs = inconsistent(d, run)
    details["pgs"] = pgs
    for pg in pgs:
        d.ceph("pg", "repair", pg, run=run)
    end = time.monotonic() + WAIT_S
    while left := inconsistent(d, run):
        if time.monotonic() > end:
            raise ActionFailed(f"pg {', '.join(left)} still inconsistent {WAIT_S:.0f}s after "
                               f"ceph pg repair")
        time.sleep(2)
    return f"repaired pg {', '.join(pgs)}" if pgs else "no inconsistent PG to repair"


def inconsistent(d: Driver, run: Runner) -> list[str]:
    pgs: list[str] = json.loads(d.rados("list-inconsistent-pg", d.pool, run=run) or "[]")
    return pgs

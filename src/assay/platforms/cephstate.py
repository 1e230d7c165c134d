"""Ceph's own state as a series, each second on the run's clock: `platform.ndjson`.

A small helper (Debian's python3 with python3-rados, which ceph-common installs) keeps one
connection to the monitors and prints `ceph status` as one JSON line a second; a thread here
turns each line into a row on the run's `t` axis (the engine's, via the timeline's ticks):

    {"t": 61.0, "health": "HEALTH_WARN", "checks": ["OSD_DOWN", "PG_DEGRADED"],
     "pgs": {"active+undersized+degraded": 24, "active+clean": 8}, "pgs_total": 32,
     "clean": false, "degraded_objects": 131, "misplaced_objects": 0, "recovery_mbps": 0.0,
     "client_read_iops": 310.0, "client_write_iops": 120.0, "client_mbps": 3.1,
     "osds": 4, "osds_up": 3, "osds_in": 4}

A second without an answer is a row with `health: "unreachable"`. The helper ends when its
output pipe does (assay killed) or when it is told to.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

SERIES = "platform.ndjson"
PYTHON = "/usr/bin/python3"  # Debian's, where python3-rados lives (not assay's venv)
HELPER = r"""
import json, os, sys, time
import rados
conf, client, keyring = sys.argv[1:4]
r = rados.Rados(conffile=conf, rados_id=client, conf={"keyring": keyring} if keyring else {})
r.connect(timeout=20)
parent = os.getppid()
cmd = json.dumps({"prefix": "status", "format": "json"})
nxt = time.time()
while os.getppid() == parent:
    t = time.time()
    try:
        ret, out, err = r.mon_command(cmd, b"", timeout=3)
        line = {"ts": t, "status": json.loads(out)} if ret == 0 else {"ts": t, "error": err}
    except Exception as e:
        line = {"ts": t, "error": str(e)}
    print(json.dumps(line), flush=True)
    nxt += 1.0
    time.sleep(max(0.0, nxt - time.time()))
"""


DOWN_CHECKS = {"OSD_DOWN", "OSD_HOST_DOWN", "OSD_ROOT_DOWN", "PG_DEGRADED", "PG_AVAILABILITY"}
MOVING = ("degraded", "undersized", "backfill", "recover", "peering", "remapped", "down",
          "incomplete", "stale", "activating")


HOUSEKEEPING = {"snaptrim", "snaptrim_wait", "scrubbing", "deep", "scrub_scheduling"}


def pg_clean(state: str) -> bool:
    """active+clean, perhaps while trimming snapshots or scrubbing (every copy is there); not
    +laggy or +wait (stats an OSD stopped refreshing, a lease after a map change)."""
    parts = state.split("+")
    return parts[:2] == ["active", "clean"] and set(parts[2:]) <= HOUSEKEEPING


def clean(st: dict[str, Any]) -> bool:
    """Every PG active+clean (pg_clean), every OSD that is in also up, and no health check
    saying an OSD or host is down."""
    pgmap, osdmap = st.get("pgmap", {}), st.get("osdmap", {})
    total = pgmap.get("num_pgs", 0)
    ok = sum(s["count"] for s in pgmap.get("pgs_by_state", []) if pg_clean(s["state_name"]))
    checks = set(st.get("health", {}).get("checks", {}))
    return total > 0 and ok == total and not checks & DOWN_CHECKS and \
        osdmap.get("num_up_osds") == osdmap.get("num_in_osds")


def recovering(st: dict[str, Any]) -> bool:
    """Ceph has noticed lost or misplaced copies: PGs degraded, peering, backfilling, ..."""
    pgmap = st.get("pgmap", {})
    return bool(pgmap.get("degraded_objects") or pgmap.get("misplaced_objects")) or any(
        w in s["state_name"] for s in pgmap.get("pgs_by_state", []) for w in MOVING)


def row(ts_line: dict[str, Any], offset: float) -> dict[str, Any]:
    """One helper line as a series row on the run's axis (`t` = wall time + offset)."""
    t = round(float(ts_line["ts"]) + offset, 3)
    st = ts_line.get("status")
    if not isinstance(st, dict):
        return {"t": t, "health": "unreachable", "error": str(ts_line.get("error", ""))[:200]}
    pgmap, osdmap = st.get("pgmap", {}), st.get("osdmap", {})
    pgs = {s["state_name"]: s["count"] for s in pgmap.get("pgs_by_state", [])}
    total = pgmap.get("num_pgs", 0)
    health = st.get("health", {})
    return {
        "t": t, "health": health.get("status", "unknown"),
        "checks": sorted(health.get("checks", {})), "pgs": pgs, "pgs_total": total,
        "pgs_clean": sum(n for state, n in pgs.items() if pg_clean(state)),
        "clean": clean(st), "recovering": recovering(st),
        "degraded_objects": pgmap.get("degraded_objects", 0),
        "misplaced_objects": pgmap.get("misplaced_objects", 0),
        "recovery_mbps": round(pgmap.get("recovering_bytes_per_sec", 0) / 1e6, 3),
        "client_read_iops": pgmap.get("read_op_per_sec", 0),
        "client_write_iops": pgmap.get("write_op_per_sec", 0),
        "client_mbps": round((pgmap.get("read_bytes_sec", 0)
                              + pgmap.get("write_bytes_sec", 0)) / 1e6, 3),
        "osds": osdmap.get("num_osds"), "osds_up": osdmap.get("num_up_osds"),
        "osds_in": osdmap.get("num_in_osds"),
    }


class CephWatch:
    """The Timeline protocol (start, tick, finish): it runs beside the load, on its clock."""

    failure: str | None = None

    def __init__(self, run_dir: Path, conf: str, client: str, keyring: str):
        self.path = run_dir / SERIES
        self.argv = [PYTHON, "-c", HELPER, conf, client, keyring]
        self.offset: float | None = None  # the run's t minus wall time, from the ticks
        self.proc: subprocess.Popen[str] | None = None
        self.thread: threading.Thread | None = None
        self.rows = 0

    def start(self, t0: float) -> None:
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._read, args=(self.proc.stdout,),
                                       daemon=True, name="assay-ceph-state")
        self.thread.start()

    def tick(self, t: float) -> None:
        self.offset = t - time.time()

    def finish(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        if self.thread is not None:
            self.thread.join(5)

    def _read(self, out: IO[str] | None) -> None:
        if out is None:
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            for text in out:
                if self.offset is None:  # before the first tick: not yet on the run's axis
                    continue
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    fh.write(json.dumps(row(json.loads(text), self.offset)) + "\n")
                    fh.flush()
                    self.rows += 1


def read(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / SERIES
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out

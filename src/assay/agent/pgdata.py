"""The loaded database of a postgres workload, made once per target and reused while
unchanged (`pg-NAME.loaded/` + `pg-NAME.loaded.json`), and each run's copy of it
(`pg-NAME.run/`, marked by `pg-NAME.run.json` before it is made). Only what assay made is
written over or removed. The one implementation: the agent's `pgbench` command uses it on a
host, postgres/dataset.py on this machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from .pgserver import NotOurs, Refused, Server, chown, remove, version


def ensure_loaded(spec: dict, bins: Path, base: Path, state: Path, port: int,
                  sockets: Path | None = None, say: Callable[[str], None] | None = None) -> dict:
    """The pristine loaded cluster `pg-NAME.loaded` in `base`, made when missing or stale
    (`state`: its logs; `sockets`: its server's socket directory, else in `state`; `say`:
    told before a load, which takes minutes for a large database)."""
    name = spec["name"]
    golden, manifest = base / f"pg-{name}.loaded", base / f"pg-{name}.loaded.json"
    ver = version(bins)
    key = hashlib.sha256(f"{spec['key']} {ver}".encode()).hexdigest()[:16]
    known: dict = {}
    if manifest.is_file():
        with contextlib.suppress(OSError, ValueError):
            known = json.loads(manifest.read_text())
    if golden.exists() and not known:
        raise NotOurs(f"{golden} exists and is not assay's (no {manifest.name} beside it): "
                      f"move it away, or give the workload another `subdir`")
    if not spec.get("fresh") and golden.is_dir() and known.get("key") == key:
        return {**known, "reused": True}
    remove(golden)  # assay's, stale
    manifest.unlink(missing_ok=True)
    if say is not None:
        what = f"scale {spec['size']}" if spec["driver"] == "pgbench" else \
            f"{spec['size']} warehouse(s)"
        say(f"loading PostgreSQL for {name} ({spec['driver']}, {what})")
    t0 = time.monotonic()
    server = Server(bins, golden, sockets or state / "sock", state / "load.log", port)
    server.initdb()
    try:
        server.start({"max_wal_size": "4GB", "checkpoint_timeout": "30min"})
        if spec["driver"] == "pgbench":
            argv = [str(bins / "pgbench"), "-i", "-q", "-s", str(spec["size"]), "postgres"]
        else:
            argv = [str(bins / "psql"), "-Xq", "-v", "ON_ERROR_STOP=1", "-v",
                    f"warehouses={spec['size']}", "-f", spec["schema"], "postgres"]
        with open(state / "load.txt", "ab") as out:
            r = subprocess.run(argv, env=server.env(), stdout=out, stderr=subprocess.STDOUT)
        if r.returncode:
            tail = (state / "load.txt").read_text(errors="replace").strip().splitlines()[-3:]
            raise Refused(f"loading the database failed: {' | '.join(tail)}")
        server.psql("CHECKPOINT")
        size = int(server.psql("SELECT pg_database_size('postgres')"))
    finally:
        server.stop()
    info = {"key": key, "driver": spec["driver"], "size": spec["size"], "server_version": ver,
            "database_bytes": size, "load_s": round(time.monotonic() - t0, 2),
            "loaded_at": time.time()}
    manifest.write_text(json.dumps(info, indent=1) + "\n")
    return {**info, "reused": False}


def theirs(base: Path, name: str, wal: Path | None) -> None:
    """Refused: a directory of the database's names that assay did not make."""
    golden, work = base / f"pg-{name}.loaded", base / f"pg-{name}.run"
    if golden.exists() and not (base / f"pg-{name}.loaded.json").is_file():
        raise NotOurs(f"{golden} exists and is not assay's (no pg-{name}.loaded.json beside "
                      f"it): move it away, or give the workload another `subdir`")
    marker = work.with_name(work.name + ".json")
    for d in (work, wal):
        if d is not None and d.exists() and not marker.exists():
            raise NotOurs(f"{d} exists and is not assay's: move it away")


def claim(base: Path, name: str, wal: Path | None) -> None:
    """The run's copy and WAL directory are ours from here on: a crashed run's (its marker
    says so) is removed, anything else refused."""
    theirs(base, name, wal)
    work = base / f"pg-{name}.run"
    for d in (work, wal):
        if d is not None and d.exists():
            remove(d)
    work.with_name(work.name + ".json").write_text(json.dumps(
        {"data": str(work), "wal": str(wal) if wal else None, "pid": os.getpid()}) + "\n")


def working_copy(golden: Path, work: Path, wal: Path | None) -> None:
    """The run's copy of the loaded cluster (its WAL in `wal` when given), once claimed."""
    r = subprocess.run(["cp", "-a", "--reflink=auto", str(golden), str(work)],
                       capture_output=True, text=True)
    if r.returncode:
        raise Refused(f"cannot copy the loaded database to {work}: {r.stderr.strip()}")
    if wal is not None:
        shutil.move(str(work / "pg_wal"), str(wal))
        (work / "pg_wal").symlink_to(wal)
        chown(wal)
    for d in (work, wal):
        if d is not None:
            subprocess.run(["sync", "-f", str(d)], capture_output=True)


def discard(work: Path, wal: Path | None) -> None:
    """The run's copy, its WAL and its marker, gone."""
    for d in (work, wal):
        if d is not None:
            remove(d)
    work.with_name(work.name + ".json").unlink(missing_ok=True)

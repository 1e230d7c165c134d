"""The loaded database: made once per target and reused while unchanged, like the prefill.

The load (pgbench -i, or the TPC-C-like population) goes into a pristine cluster
`pg-NAME.loaded/` on the target, shut down cleanly and described by `pg-NAME.loaded.json`.
Each run works on a copy, `pg-NAME.run/` (a reflink where the filesystem has them), so every
run starts from the same database however much the previous one wrote; the copy is removed
at the end. `--fresh`, or a change of driver, size or server version, reloads.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.exitcodes import RunAborted
from assay.postgres.cluster import Cluster, chown, kill_all
from assay.workloads.postgres import Params

SCRIPTS = ("new_order", "payment", "order_status", "delivery", "stock_level")


def tpcc_file(name: str) -> Path:
    return Path(str(resources.files("assay.postgres") / "tpcc" / f"{name}.sql"))


def load_key(p: Params, version: str) -> str:
    """What the loaded content depends on."""
    schema = tpcc_file("schema").read_bytes() if p.driver == "tpcc" else b"pgbench -i"
    return hashlib.sha256(f"{p.driver} {p.size} {version}".encode() + schema).hexdigest()[:16]


def loaded_paths(directory: Path, name: str) -> tuple[Path, Path]:
    return directory / f"pg-{name}.loaded", directory / f"pg-{name}.loaded.json"


def ensure_loaded(name: str, p: Params, directory: Path, logs: Path, fresh: bool,
                  console: Console, version: str) -> dict[str, Any]:
    """The pristine loaded cluster of workload `name`, made when missing or stale."""
    golden, manifest = loaded_paths(directory, name)
    key = load_key(p, version)
    if not fresh and golden.is_dir() and manifest.is_file():
        try:
            known = json.loads(manifest.read_text())
        except (OSError, ValueError):
            known = {}
        if known.get("key") == key:
            return {**known, "reused": True}
    kill_all(golden)
    shutil.rmtree(golden, ignore_errors=True)
    manifest.unlink(missing_ok=True)
    what = f"scale {p.size}" if p.driver == "pgbench" else f"{p.size} warehouse(s)"
    console.print(f"loading PostgreSQL for {name} ({p.driver}, {what})")
    t0 = time.monotonic()
    cluster = Cluster(golden, logs / "load.log")
    cluster.initdb()
    try:
        cluster.start({"max_wal_size": "4GB", "checkpoint_timeout": "30min"})
        if p.driver == "pgbench":
            _run([str(cluster.bin / "pgbench"), "-i", "-q", "-s", str(p.size), "postgres"],
                 cluster, logs / "load.txt")
        else:
            _run([str(cluster.bin / "psql"), "-Xq", "-v", "ON_ERROR_STOP=1", "-v",
                  f"warehouses={p.size}", "-f", str(tpcc_file("schema")), "postgres"],
                 cluster, logs / "load.txt")
        cluster.psql("CHECKPOINT")
        size = int(cluster.psql("SELECT pg_database_size('postgres')"))
    finally:
        cluster.stop()
    info = {"key": key, "driver": p.driver, "size": p.size, "server_version": version,
            "database_bytes": size, "load_s": round(time.monotonic() - t0, 2),
            "loaded_at": time.time()}
    manifest.write_text(json.dumps(info, indent=1) + "\n")
    return {**info, "reused": False}


def _run(argv: list[str], cluster: Cluster, out: Path) -> None:
    with open(out, "ab") as f:
        r = subprocess.run(argv, env=cluster.env(), stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        tail = out.read_text(errors="replace").strip().splitlines()[-3:]
        raise RunAborted(f"loading the database failed: {' | '.join(tail)}")


def working_copy(golden: Path, work: Path, waldir: Path | None) -> None:
    """A copy of the loaded cluster for one run; its WAL moved to `waldir` when given."""
    for stale in (work, waldir):
        if stale is not None and stale.exists():  # a crashed run's (the target is locked)
            kill_all(stale)
            shutil.rmtree(stale, ignore_errors=True)
    r = subprocess.run(["cp", "-a", "--reflink=auto", str(golden), str(work)],
                       capture_output=True, text=True)
    if r.returncode:
        raise RunAborted(f"cannot copy the loaded database to {work}: {r.stderr.strip()}")
    if waldir is not None:
        shutil.move(str(work / "pg_wal"), str(waldir))
        (work / "pg_wal").symlink_to(waldir)
        chown(waldir)
    # the copy's dirty pages go to disk now, not during the first measured seconds
    for d in (work, waldir):
        if d is not None:
            subprocess.run(["sync", "-f", str(d)], capture_output=True)

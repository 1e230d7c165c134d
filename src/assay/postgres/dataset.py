"""The loaded database: made once per target and reused while unchanged, like the prefill.

The load (pgbench -i, or the TPC-C-like population) goes into a pristine cluster
`pg-NAME.loaded/` on the target, shut down cleanly and described by `pg-NAME.loaded.json`.
Each run works on a copy, `pg-NAME.run/` (a reflink where the filesystem has them, marked by
`pg-NAME.run.json`), so every run starts from the same database however much the previous one
wrote; the copy is removed at the end. `--fresh`, or a change of driver, size or server
version, reloads. A directory of these names that assay did not make is refused, never
written over. The code is the agent's (agent/pgdata.py): a host's database is made by the
same, there.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.agent import pgdata, pgserver
from assay.exitcodes import RunAborted, UserError
from assay.postgres.cluster import SOCKET_PREFIX, free_port
from assay.workloads.postgres import Params

SCRIPTS = ("new_order", "payment", "order_status", "delivery", "stock_level")


def tpcc_file(name: str) -> Path:
    return Path(str(resources.files("assay.postgres") / "tpcc" / f"{name}.sql"))


def load_key(p: Params) -> str:
    """What the loaded content depends on, here and on a host (the server's version is added
    where it runs)."""
    schema = tpcc_file("schema").read_bytes() if p.driver == "tpcc" else b"pgbench -i"
    return hashlib.sha256(f"{p.driver} {p.size}".encode() + schema).hexdigest()


def loaded_paths(directory: Path, name: str) -> tuple[Path, Path]:
    return directory / f"pg-{name}.loaded", directory / f"pg-{name}.loaded.json"


def ensure_loaded(name: str, p: Params, directory: Path, logs: Path, fresh: bool,
                  console: Console, bins: Path) -> dict[str, Any]:
    """The pristine loaded cluster of workload `name`, made when missing or stale."""
    spec = {"name": name, "key": load_key(p), "fresh": fresh, "driver": p.driver,
            "size": p.size, "schema": str(tpcc_file("schema"))}
    sockets = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX))
    try:
        return pgdata.ensure_loaded(spec, bins, directory, logs, free_port(), sockets,
                                      console.print)
    except pgserver.Refused as e:
        raise _error(e) from None
    finally:
        shutil.rmtree(sockets, ignore_errors=True)


def working_copy(directory: Path, name: str, wal: Path | None) -> Path:
    """The run's copy of the loaded cluster (its WAL in `wal` when given): a crashed run's is
    replaced, anything else of its names refused."""
    try:
        pgdata.claim(directory, name, wal)
        work = directory / f"pg-{name}.run"
        pgdata.working_copy(loaded_paths(directory, name)[0], work, wal)
    except pgserver.Refused as e:
        raise _error(e) from None
    return work


def discard(work: Path, wal: Path | None) -> None:
    """The run's copy, its WAL and its marker, gone (its processes first)."""
    pgdata.discard(work, wal)


def _error(e: pgserver.Refused) -> Exception:
    return UserError(str(e)) if isinstance(e, pgserver.NotOurs) else RunAborted(str(e))

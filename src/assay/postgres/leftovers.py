"""A crashed run's databases: their server processes (if any survived the parent-death
signal) and their working copies, found from the run directory's `postgres/*/cluster.json`.

Only what assay made is removed: the paths recorded there, named `pg-NAME.run` / `pg-NAME.wal`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from assay.postgres.cluster import SOCKET_PREFIX, kill_all

SUFFIXES = (".run", ".wal")


def clean(run_dir: Path) -> list[str]:
    done: list[str] = []
    for state in sorted((run_dir / "postgres").glob("*/cluster.json")):
        try:
            info = json.loads(state.read_text())
        except (OSError, ValueError):
            continue
        for key in ("data", "wal"):
            path = Path(info[key]) if isinstance(info.get(key), str) else None
            if path is None or not path.name.startswith("pg-") or \
                    not path.name.endswith(SUFFIXES) or not path.exists():
                continue
            killed = kill_all(path)
            shutil.rmtree(path, ignore_errors=True)
            path.with_name(path.name + ".json").unlink(missing_ok=True)  # its copy's marker
            done.append(f"removed the PostgreSQL cluster {path} of crashed run {run_dir.name}"
                        + (f" ({killed} processes ended)" if killed else ""))
        sock = Path(info["socket"]) if isinstance(info.get("socket"), str) else None
        if sock is not None and sock.name.startswith(SOCKET_PREFIX) and sock.is_dir():
            shutil.rmtree(sock, ignore_errors=True)  # its server is gone: an empty directory
            done.append(f"removed the PostgreSQL socket directory {sock} of crashed run "
                        f"{run_dir.name}")
    return done

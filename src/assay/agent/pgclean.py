"""`pgclean TARGET...`: on a host, the databases a crashed run left in its targets.

A run's copy `pg-NAME.run/` has assay's marker `pg-NAME.run.json` beside it, naming the
agent that made it. A copy whose agent is gone (killed outright, the host rebooted) is
removed with its WAL directory and marker, after its server's processes are ended; nothing
without a marker is touched. One row per copy removed: {"removed": path, "processes": n}.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .pgdata import discard
from .pgserver import kill_all


def _alive(pid: object) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"pgbench" in cmdline and b"agent" in cmdline


def main(argv: list[str]) -> int:
    for target in argv:
        root = Path(target)
        for marker in sorted([*root.glob("pg-*.run.json"), *root.glob("*/pg-*.run.json")]):
            try:
                info = json.loads(marker.read_text())
            except (OSError, ValueError):
                continue
            if _alive(info.get("pid")) or info.get("pid") == os.getpid():
                continue  # a run still going
            work = marker.with_name(marker.name[: -len(".json")])
            wal = Path(info["wal"]) if isinstance(info.get("wal"), str) else None
            if wal is not None and not (wal.name.startswith("pg-") and wal.name.endswith(".wal")):
                wal = None  # not a name assay gives: left alone
            ended = kill_all(work) if work.exists() else 0
            discard(work, wal)
            print(json.dumps({"removed": str(work), "processes": ended}), flush=True)
    return 0

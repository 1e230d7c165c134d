"""`pgbackup SPEC`: a copy of a running database on this host, with pg_basebackup, for the
controller's `pg_backup` step (actions/pg_backup.py); on a local run this host is the
controller's own.

SPEC is one JSON argument: {"bindir", "socket", "port": the server's; "dest": the copy's
directory, made; "max_rate": bytes/s or null; "keep": leave the copy; "mine": the parent
directory is assay's, removed when empty}. Says {"done": {"bytes", "seconds"}} or
{"error": ...}. Stopped (SIGTERM, or stdin closing) mid-copy, it ends pg_basebackup and
removes the partial copy: nothing is left behind on a host whatever ends the step.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from .stopping import leave, stop_event

POLL_S = 0.2


def emit(row: dict) -> None:
    with contextlib.suppress(OSError):  # the controller gone: the row has no reader
        print(json.dumps(row, separators=(",", ":")), flush=True)


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: agent.pyz pgbackup SPEC", file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    leave(backup(spec, stop_event()))  # it ends by itself, with stdin open
    return 0


def backup(spec: dict, stop: threading.Event) -> int:
    dest, mine = Path(spec["dest"]), bool(spec.get("mine"))
    if dest.exists():  # named for this run, step and host: someone else's, never written over
        emit({"error": f"{dest} exists and is not this step's copy"})
        return 1
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        emit({"error": f"cannot make {dest.parent}: {e.strerror}"})
        return 1
    rate = spec.get("max_rate")
    argv = [str(Path(spec["bindir"]) / "pg_basebackup"), "-D", str(dest), "-X", "stream",
            "-c", "fast", *(["-r", f"{rate // 1024}k"] if rate else [])]
    env = {**os.environ, "PGHOST": spec["socket"], "PGPORT": str(spec["port"]),
           "PGUSER": "postgres"}
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as e:
        remove(dest, mine)
        emit({"error": f"cannot run {argv[0]}: {e.strerror}"})
        return 1
    while proc.poll() is None and not stop.wait(POLL_S):
        pass
    if proc.poll() is None:  # stopped: the step's timeout, or the run's end
        proc.terminate()
        proc.wait()
        remove(dest, mine)
        emit({"error": "stopped before the copy was done"})
        return 1
    seconds = time.monotonic() - t0
    output = (proc.stdout.read().decode(errors="replace") if proc.stdout else "").strip()
    if proc.returncode:
        remove(dest, mine)
        emit({"error": f"pg_basebackup failed ({proc.returncode}): {output[-400:]}"})
        return 1
    emit({"done": {"bytes": size(dest), "seconds": round(seconds, 3)}})
    if not spec.get("keep"):
        remove(dest, mine)
    return 0


def remove(dest: Path, mine: bool) -> None:
    """The copy; and its parent when assay made it (no `to`) and nothing else is in it."""
    shutil.rmtree(dest, ignore_errors=True)
    if mine:
        with contextlib.suppress(OSError):
            dest.parent.rmdir()

"""`pg_backup`: a database backup stream during the load, to a second target.

    - {action: pg_backup, at: 20s, to: /mnt/backup}
    - {action: pg_backup, at: 20s}                   (to `pg-backups/` in the target directory)
    - {action: pg_backup, at: 20s, to: /mnt/backup, workload: pg, max_rate: 100MiB}

`pg_basebackup` copies the running cluster of a postgres workload (and the WAL written
meanwhile) into `to`; the step's event records bytes, seconds and MB/s, and the phases of the
run (before / during / after the step) show what it cost the transactions, e.g.
`pg.tps >= 95% target during pg_backup`. The copy is removed afterwards unless `keep: true`.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from pathlib import Path
from typing import Literal

from pydantic import Field

from assay.actions.context import ActionContext, Stopped
from assay.platforms.fsbase import ActionFailed
from assay.scenario.models import Size, StepBase

POLL_S = 0.2


class Params(StepBase):
    action: Literal["pg_backup"] = "pg_backup"
    to: str | None = Field(None, min_length=1, description="directory on the backup target; "
                           "default: `pg-backups` in the target directory (the same target)")
    workload: str | None = Field(None, description="the postgres workload; default: the only one")
    max_rate: Size | None = Field(None, description="bytes/s cap (pg_basebackup -r)")
    keep: bool = Field(False, description="keep the backup copy after the step")


def requires(p: Params) -> set[str]:
    return set()


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def run(p: Params, ctx: ActionContext) -> str:
    running = dict(ctx.databases)  # the run's databases, by workload (postgres/sidecar.py)
    name = p.workload or (next(iter(running)) if len(running) == 1 else None)
    load = running.get(name or "")
    if load is None or load.cluster is None:
        raise ActionFailed(f"no running postgres workload {name or ''} to back up "
                           f"(running: {', '.join(running) or 'none'})")
    base = Path(p.to) if p.to else Path(ctx.platform.directory or ".") / "pg-backups"
    dest = base / f"pg-backup-{ctx.run_id}-{ctx.step_name}-{ctx.n}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    argv = [str(load.cluster.bin / "pg_basebackup"), "-D", str(dest), "-X", "stream",
            "-c", "fast", *(["-r", f"{p.max_rate // 1024}k"] if p.max_rate else [])]
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=load.cluster.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        while proc.poll() is None:
            ctx.sleep(POLL_S)
    except (Stopped, Exception):
        proc.terminate()
        proc.wait()
        shutil.rmtree(dest, ignore_errors=True)
        raise
    seconds = time.monotonic() - t0
    output = (proc.stdout.read().decode(errors="replace") if proc.stdout else "").strip()
    if proc.returncode:
        shutil.rmtree(dest, ignore_errors=True)
        raise ActionFailed(f"pg_basebackup failed ({proc.returncode}): {output[-400:]}")
    size = _size(dest)
    mbps = size / seconds / 1e6 if seconds else 0.0
    ctx.details.update({"workload": name, "bytes": size, "backup_s": round(seconds, 2),
                        "mbps": round(mbps, 2), "destination": str(dest)})
    if not p.keep:
        shutil.rmtree(dest, ignore_errors=True)
        if not p.to:
            with contextlib.suppress(OSError):
                base.rmdir()  # ours, and empty
    return f"backed up {name}: {size / 1e6:.0f} MB in {seconds:.1f}s ({mbps:.1f} MB/s)"

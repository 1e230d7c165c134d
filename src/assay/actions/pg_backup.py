"""`pg_backup`: a database backup stream during the load, to a second target.

    - {action: pg_backup, at: 20s, to: /mnt/backup}
    - {action: pg_backup, at: 20s}                   (to `pg-backups/` in the target directory)
    - {action: pg_backup, at: 20s, to: /mnt/backup, workload: pg, max_rate: 100MiB}

`pg_basebackup` copies the running cluster of a postgres workload (and the WAL written
meanwhile) into `to`, on the host the database runs on, by assay's agent there
(agent/pgbackup.py); a workload placed on several hosts is copied on each of them at once.
The step's event records bytes, seconds and MB/s (added over the hosts, each host's in
`hosts`), and the phases of the run (before / during / after the step) show what it cost the
transactions, e.g. `pg.tps >= 95% target during pg_backup`. The copy is removed afterwards
unless `keep: true`; a step stopped mid-copy (its timeout, the run's end) leaves none.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from typing import Any, Literal

from pydantic import Field

from assay.actions.context import ActionContext
from assay.platforms.fsbase import ActionFailed
from assay.postgres.servers import DatabaseServer
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


def run(p: Params, ctx: ActionContext) -> str:
    running = dict(ctx.databases)  # the run's databases, by workload (postgres/servers.py)
    name = p.workload or (next(iter(running)) if len(running) == 1 else None)
    db = running.get(name or "")
    servers = db.servers() if db is not None else {}
    if not servers:
        raise ActionFailed(f"no running postgres workload {name or ''} to back up "
                           f"(running: {', '.join(running) or 'none'})")
    label = f"pg-backup-{ctx.run_id}-{ctx.step_name}-{ctx.n}"
    copies = {h: Copy(h, s, p, label) for h, s in servers.items()}  # all hosts at once
    try:
        while any(c.proc.poll() is None for c in copies.values()):
            ctx.sleep(POLL_S)
    except BaseException:
        for c in copies.values():  # each agent ends its pg_basebackup, removes its copy
            c.stop()
        raise
    said = {h: c.result() for h, c in copies.items()}
    failed = [f"{h}: {r['error']}" if len(said) > 1 else r["error"]
              for h, r in said.items() if "error" in r]
    if failed:
        raise ActionFailed("; ".join(failed))
    size = sum(r["bytes"] for r in said.values())
    seconds = max(r["seconds"] for r in said.values())
    mbps = size / seconds / 1e6 if seconds else 0.0
    ctx.details.update({"workload": name, "bytes": size, "backup_s": round(seconds, 2),
                        "mbps": round(mbps, 2)})
    if len(copies) == 1:
        ctx.details["destination"] = next(iter(copies.values())).dest
    ctx.details["hosts"] = {h: {**r, "destination": copies[h].dest} for h, r in said.items()}
    where = f" on {len(copies)} hosts" if len(copies) > 1 else ""
    return f"backed up {name}{where}: {size / 1e6:.0f} MB in {seconds:.1f}s ({mbps:.1f} MB/s)"


class Copy:
    """pg_basebackup of one host's server, by the agent there (agent/pgbackup.py)."""

    def __init__(self, host: str, server: DatabaseServer, p: Params, label: str):
        base = p.to or f"{server.target.rstrip('/')}/pg-backups"
        # named for its host too: hosts may share a filesystem (the lab's do), and `to`
        self.host, self.dest = host, f"{base.rstrip('/')}/{label}.{host}"
        spec = {"bindir": server.bindir, "socket": server.socket, "port": server.port,
                "dest": self.dest, "max_rate": p.max_rate, "keep": p.keep, "mine": not p.to}
        self.proc = server.runner.agent("pgbackup", [json.dumps(spec)])

    def result(self) -> dict[str, Any]:
        """{"bytes", "seconds"} or {"error"}: the agent's last word."""
        out, err = self.proc.communicate()
        for row in reversed(out.decode(errors="replace").splitlines()):
            with contextlib.suppress(ValueError):
                said = json.loads(row)
                if "done" in said:
                    return dict(said["done"])
                if "error" in said:
                    return {"error": str(said["error"])}
        return {"error": f"the agent ended ({self.proc.returncode}): "
                         f"{err.decode(errors='replace').strip()[-300:] or 'no message'}"}

    def stop(self, grace: float = 10.0) -> None:
        """Its stdin closed, as the end of an SSH session closes it: the agent cleans up."""
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        self.proc.terminate()
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

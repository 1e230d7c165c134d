"""A run's hosts as one session: what the engine opens, prefills, starts, grades and closes.

The engine drives one session whatever the run's shape; the session knows where the load
runs. `LocalSession` (local.py) runs it on this machine, `HostsSession` (hosts.py) on an
inventory's hosts over SSH. The engine's loop, sampler and verdict are the same for both.

    session.open()        every check before any IO, then the run directory and its record
    session.prefill()     the stale files written (reused when unchanged), the databases loaded
    session.start()       the measured job, on every host at one instant: one FioRun
    session.close()       nothing of the run left running anywhere
    session.cleanup()     the run's services gone (databases, lock, blkio groups, target)
"""

from __future__ import annotations

import abc
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.actions.context import HostWatch
from assay.hosts.cgroup import BlkioGroup
from assay.integrity import lifecycle as integrity
from assay.metrics.sampler import ComponentSpec
from assay.plan import Plan
from assay.platforms.base import Platform
from assay.postgres.sidecar import Sidecars, fio_specs
from assay.results.rundir import RunDir
from assay.run_options import RunOptions
from assay.runners.base import FioRun
from assay.runners.issuelog import IssueLogs


class Session(abc.ABC):
    def __init__(self, plan: Plan, opt: RunOptions, platform: Platform, console: Console):
        self.plan = plan
        self.opt = opt
        self.platform = platform
        self.console = console
        self.run_dir: RunDir | None = None
        self.info: dict[str, Any] = {}  # run.json as it grows
        self.env: dict[str, str] = {}  # the job files' variables
        self.blkio: BlkioGroup | None = None  # fio's (each host's), so actions can throttle it
        self.databases: Any = None  # PostgreSQL beside fio: Sidecars, or HostDatabases
        self.integrity: integrity.AnySession | None = None  # integrity's writers and passes

    # -- what each kind of session does its own way ----------------------------------------
    @abc.abstractmethod
    def open(self) -> None:
        """Every check before any IO; then the run directory, holding a record at once."""

    @abc.abstractmethod
    def prefill(self) -> None:
        """The stale files written, the databases loaded; run.json's `prefill`."""

    @abc.abstractmethod
    def start(self) -> FioRun:
        """The measured job, on every host at one instant."""

    @abc.abstractmethod
    def clock(self) -> float:
        """Now, on the clock the load's dumps are stamped with."""

    @abc.abstractmethod
    def fetch_logs(self) -> list[Path]:
        """fio's per-IO logs, brought into the run directory (the hosts' lags, on hosts)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Nothing of the run left running on any host."""

    # -- what is the same unless a session says otherwise ------------------------------------
    def issue_logs(self) -> IssueLogs | None:
        """The agent reading the fixed-rate jobs' issue logs here (due-time latency)."""
        return None

    def specs(self) -> list[ComponentSpec]:
        """The merged series' schedule (it follows the hosts still active)."""
        return fio_specs(self.plan)

    @property
    def watch(self) -> HostWatch | None:
        """The hosts as they report (host_fail confirms a loss with it)."""
        return None

    def graded_plan(self) -> Plan:
        """The plan the merged series is graded with."""
        return self.plan

    def grade_hosts(self, steps: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
        """run.json's `cluster`: each host graded on its own; None on one host."""
        return None

    def side(self) -> Sidecars | Any:
        """The databases beside fio, or none (an empty Sidecars) to poll all the same."""
        assert self.run_dir is not None
        return self.databases or Sidecars(self.plan, self.run_dir.path, self.run_dir.id)

    def warn(self, text: str) -> None:
        self.info.setdefault("warnings", []).append(text)
        self.console.print(f"[yellow]warning:[/] {text}")

    def prepare_databases(self, directory: Path, direct: bool) -> None:
        if self.databases:
            self.info["postgres"] = self.databases.prepare(
                directory, self.opt.fresh, self.console, direct, self.platform.temporary)
            for text in self.databases.warnings():
                self.warn(text)

    def release(self) -> None:
        """The target's lock, where the session holds one."""
        return None

    def cleanup(self) -> None:
        """The databases (their servers run on the target), the target when temporary, the
        blkio groups and the platform's own; whatever the run's end."""
        if self.databases:
            self.info["postgres"] = self.databases.cleanup(self.opt.keep)
        self.release()
        try:
            d = self.platform.directory
            if d and self.platform.temporary and not self.opt.keep:
                shutil.rmtree(d, ignore_errors=True)
                self.info.setdefault("target", {})["removed"] = True
        finally:
            if self.blkio:
                self.blkio.remove()
            self.platform.cleanup(self.opt.keep)

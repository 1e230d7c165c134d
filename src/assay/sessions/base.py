"""A run's hosts as one session: what the engine opens, prefills, starts, grades and closes.

The engine drives one session whatever the run's shape; the session knows where the load
runs. `LocalSession` (local.py) runs it on this machine, `HostsSession` (hosts.py) on an
inventory's hosts over SSH. The engine's loop, sampler and verdict are the same for both.

    session.open()        every check before any IO, then the run directory and its record
    session.prefill()     the stale files written (reused when unchanged), the databases loaded:
                          the same on one host and many
    session.start()       the measured job, on every host at one instant: one FioRun
    session.collect(st)   each participant's run.json section, all it ran ended
    session.close()       nothing of the run left running anywhere
    session.cleanup()     the lock, the blkio groups, a temporary target: gone

Beside fio run the session's participants (participants/), driven by the engine.
"""

from __future__ import annotations

import abc
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.actions.context import HostWatch
from assay.integrity.session import Verifies
from assay.metrics.counters import Parsed
from assay.metrics.sampler import ComponentSpec
from assay.participants import made
from assay.participants.base import ParticipantBase, Traits, Where
from assay.participants.blkio import BlkioGroups
from assay.participants.databases import Databases
from assay.participants.integrity import Integrity
from assay.plan import Plan
from assay.platforms.base import Platform
from assay.postgres.sidecar import fio_specs
from assay.prefill import prefill
from assay.prefill.files import DataFiles, Run
from assay.results.rundir import RunDir
from assay.run_options import RunOptions
from assay.runners.base import FioRun, HostLoss


class Session(abc.ABC):
    def __init__(self, plan: Plan, opt: RunOptions, platform: Platform, console: Console):
        self.plan = plan
        self.opt = opt
        self.platform = platform
        self.console = console
        self.run_dir: RunDir | None = None
        self.info: dict[str, Any] = {}  # run.json as it grows
        self.env: dict[str, str] = {}  # the job files' variables
        self.blkio: BlkioGroups | None = None  # fio's on each host, so actions can throttle it
        self.participants: list[ParticipantBase] = []  # beside fio, in their start order
        self.plugged: list[ParticipantBase] = []  # of them, the plug-ins' (participants/)

    def _procs(self) -> dict[str, str]:
        """Each host's blkio cgroup.procs, where fio and the databases run; none unthrottled."""
        return self.blkio.procs() if self.blkio else {}

    # -- what each kind of session does its own way ----------------------------------------
    @abc.abstractmethod
    def open(self) -> None:
        """Every check before any IO; then the run directory, holding a record at once."""

    @abc.abstractmethod
    def data_files(self) -> dict[str, tuple[Run, DataFiles]]:
        """Each host's data files as its check read and claimed them, and how to reach it."""

    @abc.abstractmethod
    def start_prefill(self, sections: dict[str, list[str]]) -> FioRun:
        """fio's prefill job on every host at one instant, each writing its `sections`."""

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
    def specs(self) -> list[ComponentSpec]:
        """The merged series' schedule (it follows the hosts still active)."""
        return fio_specs(self.plan)

    def parsed(self) -> Parsed | None:
        """Where the merged series finds each job already read by a host's series."""
        return None

    @property
    def watch(self) -> HostWatch | None:
        """The hosts as they report (host_fail confirms a loss with it)."""
        return None

    def route_losses(self, route: Callable[[HostLoss], None]) -> None:
        """Where a lost host is reported (the engine's timeline and schedule); one host is
        never lost: its run ends."""
        return None

    def reschedule(self, host: str, t: float) -> None:
        """From `t` on, the schedule is the hosts' still active."""
        return None

    def graded_plan(self) -> Plan:
        """The plan the merged series is graded with."""
        return self.plan

    def grade_hosts(self, steps: Sequence[dict[str, Any]],
                    until: float | None = None) -> dict[str, Any] | None:
        """run.json's `cluster`: each host graded on its own (up to `until`, where the
        timeline ended the load early); None on one host."""
        return None

    def databases(self) -> Mapping[str, Any]:
        """The running databases, by name (what pg_backup reaches)."""
        return next((p.databases for p in self.participants if isinstance(p, Databases)), {})

    def verifier(self) -> Verifies | None:
        """Integrity mode's writers (what the verify action checks)."""
        return next((p.session for p in self.participants if isinstance(p, Integrity)), None)

    def alone(self) -> FioRun:
        """fio's place when the plan has no fio job: a participant carries the load."""
        for p in self.participants:
            if Traits.ALONE in p.traits:
                return p.alone()
        raise RuntimeError("a plan without fio jobs has a database workload")  # plan-checked

    def warn(self, text: str) -> None:
        self.info.setdefault("warnings", []).append(text)
        self.console.print(f"[yellow]warning:[/] {text}")

    def plug_in(self, where: Where) -> None:
        """The plug-ins' participants, after the built-ins."""
        self.plugged = made(where)
        self.participants += self.plugged

    def _section(self, p: ParticipantBase, section: dict[str, Any] | None) -> None:
        """A built-in's section is run.json's own; a plug-in's is under `participants`."""
        if section is not None:
            into = self.info.setdefault("participants", {}) if p in self.plugged else self.info
            into[p.name] = section

    def prefill(self) -> None:
        """The participants' own prefill (integrity's blocks), the stale data files written on
        every host at once (reused when unchanged), then the participants prepared (the
        databases loaded); run.json's `prefill`."""
        assert self.run_dir is not None
        for p in self.participants:
            p.prefill()
        if self.plan.files:  # a database-only run has no fio files
            self.info["prefill"] = prefill(self.data_files(), self.start_prefill, self.run_dir,
                                           self.console, self.opt.fresh, self.lost)
        for p in self.participants:
            self._section(p, p.prepare())
            for text in p.warnings():
                self.warn(text)

    @property
    def lost(self) -> Mapping[str, Any]:
        """The hosts lost so far, each with its `reason` (one host is never lost: its run
        ends)."""
        return {}

    def collect(self, status: str) -> None:
        """Each participant's run.json section, everything it ran ended (before the clean-up,
        which may remove a temporary target its files are on). Every participant is ended
        whatever another one does; the first failure is raised after."""
        failed: Exception | None = None
        for p in self.participants:
            try:
                self._section(p, p.collect(status))
            except Exception as e:  # noqa: BLE001 - re-raised once the others are ended
                failed = failed or e
        if failed is not None:
            raise failed

    def release(self) -> None:
        """The target's lock, where the session holds one."""
        return None

    def cleanup(self) -> None:
        """The target's lock, the target when temporary, the blkio groups and the platform's
        own; whatever the run's end, after the participants' `collect`."""
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

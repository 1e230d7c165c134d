"""What runs on a host beside fio, or instead of it: participants, with one lifecycle.

    prefill()          its own files written, before fio's (they count in fio's space check)
    prepare()          after fio's files are prefilled: loaded, started, ready
    start()            just before fio starts (an issue-log reader must wait for fio's logs)
    rows(now, origin)  each turn of the engine's loop: the seconds it finished since
    finish(now, rc)    the load ran to its end (fio's exit status rc): its last seconds
    stop()             the load was cut short (Ctrl-C, an early verdict, a failure)
    collect(status)    whatever ended the run: its run.json section, everything it ran ended

A session (sessions/) makes its participants once its hosts are checked (each checks what it
needs there before any IO) and the engine drives them the same way on one host or many: the
built-ins (databases, integrity, the issue-log reader), then the plug-ins, each made by its
`make(where)` from `Where` the run is (docs/extending.md).
What a participant can do beyond the lifecycle is declared in its `traits` (fio's ioengine
flags are the model), never probed. ParticipantBase gives every step a default that does
nothing, so a participant writes only the steps it needs.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from assay.metrics.sampler import Sample
from assay.plan import Plan
from assay.results.rundir import RunDir
from assay.runners.base import FioRun, Runner


@dataclass(frozen=True)
class Where:
    """Where a run's participants run: one host (this machine, `local`) or many, the same."""

    plan: Plan
    run_dir: RunDir
    runners: Mapping[str, Runner]  # every host of the run, by name
    lost: Collection[str]  # the hosts lost so far (it changes as the run goes)


class Traits(enum.Flag):
    NONE = 0
    ROWS = enum.auto()  # its seconds are graded beside fio's (pgbench's transactions)
    ALONE = enum.auto()  # it carries the load without fio (a database-only run): `alone()`
    HOSTS = enum.auto()  # it measures hosts each second (hosts.ndjson): `host_rows()`


class ParticipantBase:
    name = ""  # its section in run.json
    traits = Traits.NONE

    def prefill(self) -> None:
        return None

    def prepare(self) -> dict[str, Any] | None:
        """Ready for the load; its run.json section so far, if any."""
        return None

    def warnings(self) -> list[str]:
        """What the user should know of how it was prepared."""
        return []

    def start(self) -> None:
        return None

    def rows(self, now: float, origin: float) -> list[Sample]:
        """The seconds it finished (Traits.ROWS); `origin`: fio's t=0, epoch seconds."""
        return []

    def host_rows(self, t: float, origin: float) -> list[dict[str, Any]]:
        """Hosts' utilisation rows (Traits.HOSTS) for hosts.ndjson, by the second ending at
        `t` on the series' axis; `origin`: its zero, epoch seconds."""
        return []

    def end(self, t: float) -> None:
        """The load ends at `t` (the timeline's `end`, before its planned end): what runs on
        its own clock ends now, so that `finish` finds it ended."""
        return None

    def finish(self, now: float, rc: int) -> list[Sample]:
        return []

    def stop(self) -> list[Sample]:
        return []

    def collect(self, status: str) -> dict[str, Any] | None:
        return None

    def alone(self) -> FioRun:
        """fio's place when it has no job (Traits.ALONE)."""
        raise TypeError(f"{self.name} cannot carry a load alone")

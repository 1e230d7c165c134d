"""PostgreSQL and pgbench beside fio (postgres/sidecar.py here, cluster/postgres.py on hosts):
loaded after fio's prefill, started first (the clean-up stops them whatever fio does), their
transactions graded each second beside fio's."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from assay.metrics.sampler import Sample
from assay.participants.base import ParticipantBase, Traits
from assay.runners.base import FioRun


class Services(Protocol):
    """The databases of a run, on this machine or on its hosts."""

    @property
    def databases(self) -> Mapping[str, Any]:
        """The running ones, by name: what pg_backup reaches."""

    def __bool__(self) -> bool: ...
    def prepare(self, directory: Path, fresh: bool, console: Console, direct: bool,
                temporary: bool = False) -> dict[str, Any]: ...
    def warnings(self) -> list[str]: ...
    def start(self, procs: Mapping[str, str]) -> None:
        """The load from now; the servers join their host's blkio group at `procs`."""
    def poll(self, now: float, origin: float, final: bool = False) -> list[Sample]: ...
    def end_now(self) -> None:
        """Each pgbench ends now (the load ends before its -T): `finish` then collects."""
    def finish(self, now: float) -> list[Sample]: ...
    def stop(self) -> list[Sample]: ...
    def cleanup(self, keep: bool) -> dict[str, Any]: ...
    def idle_run(self) -> FioRun: ...


class Databases(ParticipantBase):
    name = "postgres"
    traits = Traits.ROWS | Traits.ALONE

    def __init__(self, services: Services, directory: Path, direct: bool, fresh: bool,
                 keep: bool, temporary: bool, procs: Mapping[str, str], console: Console):
        self.services = services
        self.directory = directory  # where the servers keep their data: the target's
        self.direct = direct
        self.fresh = fresh
        self.keep = keep
        self.temporary = temporary  # assay's own target: the server's user must reach in
        self.procs = procs  # each host's blkio cgroup.procs, when the run throttles
        self.console = console
        self.collected: dict[str, Any] | None = None

    @property
    def databases(self) -> Mapping[str, Any]:
        return self.services.databases

    def prepare(self) -> dict[str, Any] | None:
        return self.services.prepare(self.directory, self.fresh, self.console, self.direct,
                                     self.temporary)

    def warnings(self) -> list[str]:
        return self.services.warnings()

    def start(self) -> None:
        self.services.start(self.procs)

    def rows(self, now: float, origin: float) -> list[Sample]:
        return self.services.poll(now, origin)

    def end(self, t: float) -> None:
        self.services.end_now()

    def finish(self, now: float, rc: int) -> list[Sample]:
        """pgbench's -T ends with the run; fio failing ends it at once."""
        return self.services.finish(now) if rc == 0 else self.services.stop()

    def stop(self) -> list[Sample]:
        return self.services.stop()

    def collect(self, status: str) -> dict[str, Any] | None:
        """Every database stopped and removed (once: a run can end twice over)."""
        if self.collected is None:
            self.collected = self.services.cleanup(self.keep)
        return self.collected

    def alone(self) -> FioRun:
        return self.services.idle_run()

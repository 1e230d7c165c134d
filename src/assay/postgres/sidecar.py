"""Database workloads beside fio: prepared before the load, started with it, polled for
per-second samples on the run's time axis, stopped and removed whatever ends the run.

The engine knows them through `Sidecars` only: `prepare` (tools, load, working cluster),
`start` (pgbench; the server's processes join the run's blkio group so `throttle` reaches
them), `poll` (samples; RunAborted when the postmaster or pgbench dies), `finish`, `stop`,
`cleanup`. A scenario without fio workloads runs on `IdleRun`, a stand-in for fio's process
that ends when pgbench does, so the engine needs no fio at all. Each database is a
`PostgresLoad` (postgres/load.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from assay.metrics.sampler import ComponentSpec, Sample
from assay.postgres.cluster import account, bindir
from assay.postgres.load import PostgresLoad
from assay.runners.base import FioRunBase, Runner
from assay.scenario.models import ResolvedScenario
from assay.workloads.postgres import Params

STATE = "postgres"  # run directory sub-directory: per workload, its cluster's state and logs


class Planned(Protocol):
    """What the sidecars read of a plan (plan/model.py's Plan), without importing plan."""

    @property
    def resolved(self) -> ResolvedScenario: ...
    @property
    def specs(self) -> Sequence[ComponentSpec]: ...
    @property
    def warmup(self) -> float: ...
    @property
    def total_seconds(self) -> float: ...


def fio_specs(plan: Planned) -> list[ComponentSpec]:
    """The components fio's dumps feed (database components come from their sidecar)."""
    return [c for c in plan.specs if c.jobs]


class Sidecars:
    """The run's database workloads."""

    def __init__(self, plan: Planned, run_dir: Path, run_id: str, runner: Runner | None = None):
        """`runner`: this host's, where pg_backup's agent copies a database."""
        backup = any(s.action == "pg_backup" for s in plan.resolved.steps)  # plan-checked
        self.loads = [PostgresLoad(n, w, run_dir / STATE / n, run_id, backup, runner=runner)
                      for n, w in plan.resolved.workloads.items()
                      if isinstance(w, Params)]
        self.warmup = plan.warmup
        self.specs = {c.component: c for c in plan.specs}  # a fixed rate's target, each second
        self.seconds = plan.total_seconds
        self.origin: float | None = None
        self.databases: dict[str, PostgresLoad] = {}  # running, for actions (pg_backup)

    def __bool__(self) -> bool:
        return bool(self.loads)

    def check(self) -> None:
        """UserError naming the package when PostgreSQL or its user is missing."""
        if self.loads:
            bindir()
            account()

    def prepare(self, directory: Path, fresh: bool, console: Console, direct: bool,
                temporary: bool = False) -> dict[str, Any]:
        if not self.loads:
            return {}
        if temporary:  # our own temporary target: the server's user must reach into it
            directory.chmod(0o711)
        for load in self.loads:
            load.prepare(directory, fresh, console, direct)
            self.databases[load.name] = load
        return self.info()

    def warnings(self) -> list[str]:
        return [w for load in self.loads for w in load.warnings]

    def info(self) -> dict[str, Any]:
        return {load.name: load.info for load in self.loads}

    def start(self, procs: Mapping[str, str]) -> None:
        """pgbench on every database; the servers join this host's blkio group (`procs`
        names the one host's cgroup.procs, when the run throttles)."""
        for load in self.loads:
            load.start(self.seconds, next(iter(procs.values()), None))

    def poll(self, now: float, origin: float, final: bool = False) -> list[Sample]:
        """The finished seconds of every database; RunAborted if one died."""
        # fio's t=0 (its jobs' start) is known from its first dump, before the first
        # database second is emitted (GRACE_S later): both series share one axis
        self.origin = origin
        out: list[Sample] = []
        for load in self.loads:
            if load.fold is not None and not final:
                load.check()
            out += load.seconds(now, self.origin, self.warmup, self.specs, final)
        return out

    def finish(self, now: float, timeout: float = 30.0) -> list[Sample]:
        """Wait for pgbench to end (its -T ends with the run), then the last seconds."""
        end = time.monotonic() + timeout
        for load in self.loads:
            while load.pgbench is not None and load.pgbench.poll() is None \
                    and time.monotonic() < end:
                load.check()
                time.sleep(0.1)
            load.stop_pgbench()
            load.check()
        return self.poll(now, self.origin or now, final=True)

    def end_now(self) -> None:
        for load in self.loads:
            load.end()

    def stop(self) -> list[Sample]:
        for load in self.loads:
            load.stop_pgbench()
        return self.poll(time.time(), self.origin or time.time(), final=True) \
            if self.origin else []

    def cleanup(self, keep: bool) -> dict[str, Any]:
        """Stop and remove every database (best effort: each one whatever the others do)."""
        self.databases.clear()
        for load in self.loads:
            try:
                load.cleanup(keep)
            except Exception as e:  # noqa: BLE001 - the run must still end with a record
                load.info["cleanup_error"] = f"{type(e).__name__}: {e}"
        return self.info()

    def running(self) -> bool:
        return any(x.pgbench is not None and x.pgbench.poll() is None for x in self.loads)

    def idle_run(self) -> IdleRun:
        return IdleRun(self)


class IdleRun(FioRunBase):
    """fio's place in a run without fio workloads: no documents, ends when pgbench does."""

    def __init__(self, sidecars: Sidecars, started: float | None = None):
        self.sidecars = sidecars
        # the run's t=0: when the load starts (on hosts, pgbench's instant T0, ahead of now)
        self.started = started if started is not None else time.time()
        self.last_doc: dict[str, Any] | None = None
        self._stopped = False

    def documents(self, poll: float = 0.2) -> Iterator[dict[str, Any] | None]:
        while not self._stopped and self.sidecars.running():
            time.sleep(poll)
            yield None

    def stop(self) -> None:
        self._stopped = True

    def wait(self) -> int:
        return 0

    def stderr_tail(self, lines: int = 5) -> str:
        return ""

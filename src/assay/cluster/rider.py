"""A rider: one fio started mid-run on the host that takes instances, a lost host's on a
survivor (failover) or a recovered host's own (rejoin). Its dumps are pumped from a thread of
its own; its first IO is placed on the run's axis (`ran_ms`); `record` is its entry in
run.json's `cluster.failover`. The Failover (cluster/failover.py) starts and tracks them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.plan.failover import Instance
from assay.runners.base import Document, FioRun


@dataclass
class Rider:
    """One fio started mid-run: `kind` failover (a lost host's instances on a survivor) or
    rejoin (a recovered host's own)."""

    kind: str
    host: str
    source: str
    instances: list[Instance]
    loss_t: float | None
    restart_t: float  # its start instant on the run's axis
    offset_s: float  # the host's clock minus this machine's
    jobs_start_s: float  # the axis' zero, this machine's clock
    run: FioRun | None = None
    last: Document | None = None
    slot: int | None = None  # its place among the riders' jobs, from its first dump on
    merged: Document | None = None  # its dump in the newest merged one
    first_io_t: float | None = None
    ended: int | None = None
    lost_t: float | None = None  # its host was lost while it ran
    stopped: bool = False  # still running after the run's hosts ended: assay stopped it
    error: str = ""
    added: list[tuple[str, float, float, float]] = field(default_factory=list)
    on_start: Callable[[Rider], None] | None = None  # its first IO: the target steps up

    def pump(self) -> None:
        assert self.run is not None
        with contextlib.suppress(Exception):
            for doc in self.run.documents(poll=0.5):
                if doc is not None:
                    self.last = doc
                    if self.first_io_t is None:
                        self.first_io_t = self._first_io(doc)
                        if self.first_io_t is not None and self.on_start is not None:
                            self.on_start(self)
        self.ended = self.run.wait()

    def _first_io(self, doc: Document) -> float | None:
        """When its first IO was issued, on the run's axis: the dump's time less the run time
        of the longest-running job that did IO (a paced job issues its first IO at once)."""

        if not self.ios(doc):
            return None
        t = float(doc["timestamp_ms"]) / 1000 - self.offset_s - ran_ms(doc["jobs"]) / 1000
        return round(t - self.jobs_start_s, 2)

    def ios(self, doc: Document | None = None) -> int:
        jobs = (doc or self.last or {}).get("jobs", [])
        return sum(int(((j.get(d) or {}).get("lat_ns") or {}).get("N") or 0)
                   for j in jobs for d in ("read", "write"))

    def record(self) -> dict[str, Any]:
        gap = None if self.first_io_t is None or self.loss_t is None else \
            round(self.first_io_t - self.loss_t, 2)
        return {"kind": self.kind, "host": self.host, "from": self.source,
                "instances": [f"{i.workload}@{i.host}.{i.k}" for i in self.instances],
                "lost_at_s": self.loss_t, "restart_s": round(self.restart_t, 2),
                "first_io_s": self.first_io_t, "gap_s": gap, "ios": self.ios(),
                "exit": self.ended, "stopped": self.stopped, "host_lost_s": self.lost_t,
                **({"error": self.error} if self.error else {})}


def ran_ms(jobs: Sequence[Document]) -> float:
    """How long the jobs have run (ms): the longest-running job that did IO. A staggered
    instance's job in its startdelay or ramp_time reports a job_runtime that is not its
    load's (longer than its neighbours'), and would start the axis too early."""
    did = [j for j in jobs if any(int(((j.get(d) or {}).get("lat_ns") or {}).get("N") or 0)
                                  for d in ("read", "write"))]
    return max((float(j.get("job_runtime") or 0) for j in did or jobs), default=0.0)

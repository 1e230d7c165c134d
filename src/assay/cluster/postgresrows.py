"""The rows each host's database agent sends (cluster/postgres.py starts them), read: into
each workload's seconds (postgres/hostrows.py), every second into each host's own series
(graded by `each_host.`) and, added up, into the merged series; a database that stops
sending, or whose host is lost, into a loss (a timeline event and a failed check of that
host).
"""

from __future__ import annotations

import queue

from assay.metrics.sampler import Sample
from assay.plan import Plan
from assay.postgres.hostrows import Names, Row, Seconds, merge, rates
from assay.postgres.hostspec import Hosts, Remote, lost
from assay.results.rundir import RunDir
from assay.workloads.postgres import Params


class DatabaseRows:
    """What the run's databases on their hosts sent, read (HostDatabases.rows)."""

    def __init__(self, plan: Plan, group: Hosts, rd: RunDir, remotes: list[Remote],
                 params: dict[str, Params]):
        self.plan, self.group, self.rd = plan, group, rd
        self.remotes = remotes
        self.seconds = {n: Seconds(r.host for r in remotes if r.name == n)
                        for n in params}
        self.names = {n: Names.of(n, p) for n, p in params.items()}
        self.t0: float | None = None  # pgbench's start instant, on this machine's clock
        self.origin: float | None = None
        self._axis = False  # the run's time axis is known (poll)

    def poll(self, now: float, origin: float, final: bool = False) -> list[Sample]:
        """The merged seconds complete so far; each host's own go to its series."""
        for r in self.remotes:
            self.drain(r)
        # the axis starts with fio's jobs, known once the engine has read their first dump:
        # the call after the one that first saw a merged dump
        run = self.group.current
        ready, self._axis = self._axis, run is None or not run.measured or \
            run.last_doc is not None
        if not ready and not final:
            return []
        self.origin = origin
        out: list[Sample] = []
        for name, seconds in self.seconds.items():
            for k, rows in seconds.ready(final):
                out += self._second(name, k, rows)
        return out

    def drain(self, r: Remote) -> None:
        """What `r`'s agent has sent so far, taken in; lost with its host if that is."""
        while True:
            try:
                row = r.rows.get_nowait()
            except queue.Empty:
                break
            if "s" in row:
                self.seconds[r.name].add(r.host, int(row["s"]), row.get("streams") or {})
            elif "started" in row:
                r.info.update({k: row[k] for k in ("late_ms", "pgbench")})
            elif "end" in row:
                r.info["transactions"] = row["end"]
                r.ended = True
                self.seconds[r.name].close(r.host)
            elif "removed" in row:
                r.info["removed"] = True
            elif "error" in row or "gone" in row:
                self.lose(r, row.get("error") or f"its agent ended: {row['gone'] or '?'}")
        if not r.ended and self.t0 is not None and self.group.is_lost(r.host):
            self.lose(r, f"its host was lost ({self.group.lost[r.host]['reason']})")

    def lose(self, r: Remote, why: str) -> None:
        """`r`'s database lost (once, and only during the load): an event, a failed check."""
        if r.ended or r.lost or self.t0 is None:  # before the load: prepare() says why
            r.ended = True
            return
        r.lost, r.ended = why, True
        self.seconds[r.name].close(r.host)
        t = round(self.seconds[r.name].next + 1.0, 3)
        r.info["lost_at_s"] = t
        self.rd.event("database_lost", host=r.host, workload=r.name, t=t, reason=why)
        self.group.series.failures.setdefault(r.host, []).append(lost(r.host, r.name, t, why))

    def _second(self, name: str, k: int, rows: dict[str, Row]) -> list[Sample]:
        assert self.plan.cluster is not None and self.t0 is not None and self.origin
        t = round(self.t0 + k + 1 - self.origin, 3)
        if t <= 0:  # a second before the run's axis starts (fio's jobs): not measured
            return []
        phase = "warmup" if t - 0.5 < self.plan.warmup else "run"
        merged = {s.component: s for s in self.group.specs}
        for host, row in rows.items():
            own = {s.component: s for s in self.plan.cluster.hosts[host].specs}
            self.group.series.add(host, self.names[name].samples(row, t, phase,
                                                                 rates(own, t)))
        return self.names[name].samples(merge(rows.values()), t, phase, rates(merged, t))

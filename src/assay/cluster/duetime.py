"""Latency from the due time on every host of a cluster run: the agent's `issuelog` beside
fio on each host (runners/issuelog.py), its rows merged into each host's figures and the
cluster's.

Each host's fixed-rate jobs write their issue logs in the host's run directory (one per
instance); the agent there folds them into per-second lag histograms and sends only those
(a few hundred bytes per job and second). Each row is kept with its host, as it comes, in
the `host_lags` stream (sealed into compressed blocks as the run goes: results/blocklog.py)
and, once the hosts' agents have ended, all of them go in time order into the run's `lags`
stream: the merged figure joins the merged samples with every host's lags (the hosts'
histograms add), as a one-host run joins its own; each host's joins its own samples with
its own lags (`HostSeries.grade`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.exitcodes import UserError
from assay.metrics.duetime import STREAM, PacedJob, due_join, due_windows, logged_jobs
from assay.plan import RUN_JOB, Plan
from assay.results.blocklog import BlockLog
from assay.results.rundir import RunDir
from assay.runners.agent import agent_python
from assay.runners.base import Runner
from assay.runners.issuelog import IssueLogs, Pump

HOST_STREAM = "host_lags"


class HostLags:
    def __init__(self, plan: Plan, rd: RunDir):
        self.rd = rd
        self.jobs: dict[str, list[PacedJob]] = {
            h: logged_jobs(files.get(RUN_JOB, "")) for h, files in plan.jobfiles.items()}
        self.readers: dict[str, IssueLogs] = {}
        self.rows: dict[str, list[dict[str, Any]]] = {}  # host -> its lag rows
        self.errors: dict[str, str] = {}  # host -> why its figures are missing or partial
        self.pump: Pump | None = None  # one thread reads every host's agent
        self.log: BlockLog | None = None  # the host_lags stream, open while agents send
        self._lock = threading.Lock()

    def needed(self, host: str) -> bool:
        return bool(self.jobs.get(host))

    def check(self, host: str, runner: Runner) -> None:
        """Before any IO: the host runs the agent (python3 >= 3.9), or the run is refused."""
        if self.needed(host):
            _, problem = agent_python(runner)
            if problem:
                raise UserError(problem)

    def start(self, runners: Mapping[str, Runner]) -> None:
        """The agent on every host that needs it, before fio starts there."""
        for host, runner in runners.items():
            if self.needed(host) and host not in self.readers:
                self.rows[host] = []
                self.log = self.log or BlockLog(self.rd.path, HOST_STREAM)
                self.pump = self.pump or Pump()
                self.readers[host] = IssueLogs(runner, [j.spec() for j in self.jobs[host]],
                                               functools.partial(self._row, host),
                                               pump=self.pump).start()

    def _row(self, host: str, row: dict[str, Any]) -> None:
        with self._lock:
            if self.log is None:  # an agent still talking after finish(): its run has ended
                return
            self.rows[host].append(row)
            self.log.append([{"host": host, **row}])

    def finish(self, lost: Collection[str]) -> None:
        """Every host's fio has ended: each agent sends what is left and ends (a lost host's
        is ended at once: what it sent is kept); then the `lags` stream, in time order."""
        for host in lost:
            if host in self.readers:
                self.readers[host].stop()
        readers = list(self.readers.items())
        if readers:
            with ThreadPoolExecutor(max_workers=min(16, len(readers))) as pool:
                list(pool.map(lambda hr: hr[1].finish(timeout=5 if hr[0] in lost else 60),
                              readers))
        for host, reader in readers:
            if host in lost:
                continue
            if reader.error:
                self.errors[host] = reader.error
            elif not any(reader.ios.values()):  # fio wrote no log there, or it was lost
                self.errors[host] = "its issue logs held no IO"
        self.readers.clear()
        if self.pump is not None:
            self.pump.close()
            self.pump = None
        self.close()
        merged = sorted(({"host": h, **r} for h, rows in self.rows.items() for r in rows),
                        key=lambda r: float(r["t"]))
        store = BlockLog(self.rd.path, STREAM)
        try:
            for i in range(0, len(merged), 1000):
                store.append(merged[i:i + 1000])
        finally:
            store.close()

    def close(self) -> None:
        """The host_lags stream ends: its rows stay readable (a tail and blocks)."""
        with self._lock:
            if self.log is not None:
                self.log.close()
                self.log = None

    def host_figures(self, host: str, plan: Plan, samples: Sequence[dict[str, Any]]) \
            -> dict[str, dict[str, float | None]]:
        """Latency from the due time of one host's components (`plan`: as the host sees it),
        from its own samples and lags."""
        rows = self.rows.get(host)
        if not rows:
            return {}
        return due_join(samples, sorted(rows, key=lambda r: float(r["t"])), due_windows(plan))

    def record(self) -> dict[str, Any]:
        """run.json's `cluster.due_time`: the hosts read, and any host whose agent failed."""
        return {"hosts": sorted(self.rows), "errors": self.errors}

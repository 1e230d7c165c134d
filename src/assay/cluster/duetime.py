"""Latency from the due time on every host of a cluster run: the agent's `issuelog` beside
fio on each host (runners/issuelog.py), its rows merged into each host's figures and the
cluster's.

Each host's fixed-rate jobs write their issue logs in the host's run directory (one per
instance); the agent there folds them into per-second lag histograms and sends only those
(a few hundred bytes per job and second). Each row goes, as it comes, into the `lags`
stream of its host's directory, `hosts/<host>/` (sealed into compressed blocks as the run
goes: results/blocklog.py; none is held in memory) and, once the hosts' agents have ended,
the hosts' streams are merged in time order into the run's `lags` stream: the merged figure
joins the merged samples with every host's lags (the hosts' histograms add), as a one-host
run joins its own; each host's joins its own samples with its own lags (`HostSeries.grade`).
"""

from __future__ import annotations

import functools
import heapq
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.exitcodes import UserError
from assay.metrics.duetime import SLACK_S, STREAM, PacedJob, due_join, due_windows, logged_jobs
from assay.plan import RUN_JOB, Plan
from assay.results.blocklog import BlockLog, read_rows
from assay.results.rundir import RunDir
from assay.runners.agent import agent_python
from assay.runners.base import Runner
from assay.runners.issuelog import IssueLogs, Pump


class HostLags:
    def __init__(self, plan: Plan, rd: RunDir):
        self.rd = rd
        self.jobs: dict[str, list[PacedJob]] = {
            h: logged_jobs(files.get(RUN_JOB, "")) for h, files in plan.jobfiles.items()}
        self.readers: dict[str, IssueLogs] = {}
        self.errors: dict[str, str] = {}  # host -> why its figures are missing or partial
        self.pump: Pump | None = None  # one thread reads every host's agent
        self.hosts: set[str] = set()  # those whose agent was started
        self.logs: dict[str, BlockLog] = {}  # each host's lags, open while its agent sends
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
                self.hosts.add(host)
                if host not in self.logs:
                    self.logs[host] = BlockLog(self.rd.host_dir(host), STREAM)
                self.pump = self.pump or Pump()
                self.readers[host] = IssueLogs(runner, [j.spec() for j in self.jobs[host]],
                                               functools.partial(self._row, host),
                                               pump=self.pump).start()

    def _row(self, host: str, row: dict[str, Any]) -> None:
        with self._lock:
            log = self.logs.get(host)
            if log is None:  # an agent still talking after finish(): its run has ended
                return
            log.append([row])

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
        merged = heapq.merge(*(self._keyed(h) for h in sorted(self.hosts)),
                             key=lambda r: float(r["t"]))
        store = BlockLog(self.rd.path, STREAM)
        try:
            batch: list[dict[str, Any]] = []
            for row in merged:
                batch.append(row)
                if len(batch) == 1000:
                    store.append(batch)
                    batch = []
            store.append(batch)
        finally:
            store.close()

    def _keyed(self, host: str) -> Iterator[dict[str, Any]]:
        for row in in_time_order(read_rows(self.rd.host_dir(host), STREAM)):
            yield {"host": host, **row}

    def close(self) -> None:
        """The hosts' lags streams end: their rows stay readable (a tail and blocks)."""
        with self._lock:
            logs, self.logs = self.logs, {}
        for log in logs.values():
            log.close()

    def host_figures(self, host: str, plan: Plan, samples: Iterable[dict[str, Any]]) \
            -> dict[str, dict[str, float | None]]:
        """Latency from the due time of one host's components (`plan`: as the host sees it),
        from its own samples and lags, both read back from the host's streams."""
        if host not in self.hosts:
            return {}
        return due_join(samples, in_time_order(read_rows(self.rd.host_dir(host), STREAM)),
                        due_windows(plan))

    def record(self) -> dict[str, Any]:
        """run.json's `cluster.due_time`: the hosts read, and any host whose agent failed."""
        return {"hosts": sorted(self.hosts), "errors": self.errors}


def in_time_order(rows: Iterable[dict[str, Any]], slack: float = SLACK_S) \
        -> Iterator[dict[str, Any]]:
    """A host's lag rows in time order: its agent sends each job's seconds in order, the
    jobs a little apart. Only the last `slack` seconds are held; a row later than that
    comes out late, as the join would take it anyway."""
    held: list[tuple[float, int, dict[str, Any]]] = []
    newest = float("-inf")
    for i, row in enumerate(rows):
        t = float(row["t"])
        newest = max(newest, t)
        heapq.heappush(held, (t, i, row))
        while held[0][0] < newest - slack:
            yield heapq.heappop(held)[2]
    while held:
        yield heapq.heappop(held)[2]

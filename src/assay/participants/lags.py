"""Latency from the due time on every host of a run, this machine's alone (a local run) or
an inventory's: the agent's `issuelog` beside fio on each host (runners/issuelog.py), its
rows kept for the run's figure and, on a cluster, each host's.

Each host's fixed-rate jobs write their issue logs in the host's run directory (one per
instance); the agent there folds them into per-second lag histograms and sends only those
(a few hundred bytes per job and second). All the hosts' agents are read by one thread
(Pump). Each row goes, as it comes, into the run's `lags` stream, naming its host (sealed
into compressed blocks as the run goes: results/blocklog.py; none is held in memory), where
the live figures read it (observe/duelive.py), and, where each host is graded on its own
(`each_host`: a cluster run), into the `lags` stream of its host's directory too,
`hosts/<host>/`. The hosts' rows come as their seconds close, a few seconds apart at most:
the streams are read back in time order (metrics/duetime.py in_time_order). The merged
figure joins the merged samples with every host's lags (the hosts' histograms add); each
host's joins its own samples with its own lags (`HostSeries.grade`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Collection, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.exitcodes import UserError
from assay.metrics.duetime import STREAM, due_join, due_windows, in_time_order
from assay.metrics.pacedjobs import PacedJob, logged_jobs
from assay.plan import RUN_JOB, Plan
from assay.results.blocklog import BlockLog, read_rows
from assay.results.rundir import RunDir
from assay.runners.agent import agent_python
from assay.runners.base import Runner
from assay.runners.issuelog import IssueLogs, Pump


class HostLags:
    def __init__(self, plan: Plan, rd: RunDir, each_host: bool = True):
        self.rd = rd
        self.each_host = each_host  # each host's own stream, for its own figures
        self.jobs: dict[str, list[PacedJob]] = {
            h: logged_jobs(files.get(RUN_JOB, "")) for h, files in plan.jobfiles.items()}
        self.readers: dict[str, IssueLogs] = {}
        self.errors: dict[str, str] = {}  # host -> why its figures are missing or partial
        self.pump: Pump | None = None  # one thread reads every host's agent
        self.hosts: set[str] = set()  # those whose agent was started
        self.logs: dict[str, BlockLog] = {}  # each host's lags (each_host), while it sends
        self.run_log: BlockLog | None = None  # the run's, every host's rows as they come
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
                self.run_log = self.run_log or BlockLog(self.rd.path, STREAM)
                if self.each_host and host not in self.logs:
                    self.logs[host] = BlockLog(self.rd.host_dir(host), STREAM)
                self.pump = self.pump or Pump()
                self.readers[host] = IssueLogs(runner, [j.spec() for j in self.jobs[host]],
                                               functools.partial(self._row, host),
                                               pump=self.pump).start()

    def _row(self, host: str, row: dict[str, Any]) -> None:
        with self._lock:
            if self.run_log is None:  # an agent still talking after finish(): its run ended
                return
            self.run_log.append([{"host": host, **row}])
            if host in self.logs:
                self.logs[host].append([row])

    def finish(self, lost: Collection[str]) -> None:
        """Every host's fio has ended: each agent sends what is left and ends (a lost host's
        is ended at once: what it sent is kept); the streams end."""
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

    def close(self) -> None:
        """The lags streams end: their rows stay readable (a tail and blocks)."""
        with self._lock:
            logs, self.logs = [*self.logs.values(), self.run_log], {}
            self.run_log = None
        for log in logs:
            if log is not None:
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
        """The hosts read, and any host whose agent failed (run.json's `due_time`)."""
        return {"hosts": sorted(self.hosts), "errors": self.errors}

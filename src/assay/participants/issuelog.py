"""The agent reading fio's issue logs beside fio, for latency from the due time: here
(runners/issuelog.py; its rows are the run's `lags` stream) or on each host
(cluster/duetime.py; the hosts' rows merged into `lags` at the end)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.metrics.duetime import STREAM, PacedJob
from assay.participants.base import ParticipantBase
from assay.results.blocklog import BlockLog
from assay.results.rundir import RunDir
from assay.runners.base import Runner
from assay.runners.issuelog import IssueLogs


class LocalIssueLog(ParticipantBase):
    name = "due_time"

    def __init__(self, runner: Runner, jobs: list[PacedJob], rd: RunDir):
        self.runner = runner
        self.jobs = jobs
        self.rd = rd
        self.reader: IssueLogs | None = None

    def start(self) -> None:
        """Before fio: the agent waits for the logs fio opens."""
        store = BlockLog(self.rd.path, STREAM)
        self.reader = IssueLogs(self.runner, [j.spec() for j in self.jobs],
                                lambda row: store.append([row]), store.close).start()

    def finish(self, now: float, rc: int) -> list[Any]:
        self._end()
        return []

    def stop(self) -> list[Any]:
        self._end()
        return []

    def collect(self, status: str) -> dict[str, Any] | None:
        self._end()
        return None

    def _end(self) -> None:
        """The agent sends what fio wrote last and ends (once)."""
        reader, self.reader = self.reader, None
        if reader is not None:
            reader.finish()


class HostsIssueLog(ParticipantBase):
    name = "due_time"

    def __init__(self, start: Callable[[], None], end: Callable[[], None]):
        self._start = start  # the agents on the hosts still active (HostLags.start)
        self._end = end  # every agent ended, the hosts' rows merged (HostLags.finish)
        self.ended = False

    def start(self) -> None:
        self._start()

    def collect(self, status: str) -> dict[str, Any] | None:
        """After the load, before the hosts' run directories go: a lost host's agent is
        ended at once, what it sent is kept."""
        if not self.ended:
            self.ended = True
            self._end()
        return None  # its figures are the cluster section's `due_time`

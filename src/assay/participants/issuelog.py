"""The agents reading fio's issue logs beside fio, for latency from the due time: one on each
host of the run, this machine's alone on a local run (participants/lags.py keeps their rows).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from assay.participants.base import ParticipantBase
from assay.participants.lags import HostLags
from assay.runners.base import Runner


class IssueLog(ParticipantBase):
    name = "due_time"

    def __init__(self, lags: HostLags, runners: Mapping[str, Runner], lost: Collection[str]):
        self.lags = lags
        self.runners = runners  # every host of the run
        self.lost = lost  # the hosts lost so far (it changes as the run goes)
        self.ended = False

    def start(self) -> None:
        """Before fio: each agent waits for the logs fio opens (a lost host's is not started)."""
        self.lags.start({h: r for h, r in self.runners.items() if h not in self.lost})

    def finish(self, now: float, rc: int) -> list[Any]:
        self._end()
        return []

    def stop(self) -> list[Any]:
        self._end()
        return []

    def collect(self, status: str) -> dict[str, Any] | None:
        """Whatever ended the run: a lost host's agent is ended at once, what it sent kept.
        run.json's `due_time`: the hosts read and why any host's figure is missing (a
        cluster's is its section's, `cluster.due_time`, beside each host's figures)."""
        self._end()
        return None if self.lags.each_host else self.lags.record()

    def _end(self) -> None:
        """The agents send what fio wrote last and end (once)."""
        if not self.ended:
            self.ended = True
            self.lags.finish(self.lost)

"""The seam between the engine and the hosts it runs on.

A runner carries out fio on one host: it keeps the host's job files, starts fio at an
instant, streams fio's json+ status dumps as they come, stops it, brings back its logs and
runs commands there. The engine drives one runner per host and knows nothing of how a host is
reached: LocalRunner runs fio here, ReplayRunner plays back recorded fio output (tests).

What a runner can do beyond that core is declared in its `powers` (fio's ioengine flags are
the model), never probed: every runner has every method, and the powers say which mean
something there.
"""

from __future__ import annotations

import abc
import enum
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from assay.hosts.result import CommandResult as CommandResult  # its home: hosts/

Document = dict[str, Any]  # one fio json+ status dump


class Powers(enum.Flag):
    """A runner's optional powers."""

    NONE = 0
    CLOCK = enum.auto()  # the host keeps its own clock: measure_clock gives its offset to ours
    SESSION = enum.auto()  # reached through a session: ping tests it, abandon drops it unasked


class FioRun(Protocol):
    """One fio process started by a runner."""

    @property
    def started(self) -> float:
        """Host clock (epoch seconds) when fio was started."""

    @property
    def last_doc(self) -> Document | None:
        """The newest status dump delivered by `documents`."""

    def documents(self, poll: float = 0.2) -> Iterator[Document | None]:
        """Each status dump as it arrives, and None every `poll` s while waiting (so the
        caller can run its timeline); ends when fio's output ends."""

    def stop(self) -> None:
        """Ask fio to finish (it prints its final report); kill it if it does not."""

    def wait(self) -> int:
        """fio's exit status (negative: killed by that signal)."""

    def stderr_tail(self, lines: int = 5) -> str:
        """The last meaningful lines fio wrote to stderr: why it died."""

    # what a run over a session adds (False, None and `stop` for one without)
    @property
    def session_ended(self) -> bool:
        """The session ended before the host reported fio's status (ssh's 255)."""

    @property
    def last_beat(self) -> float | None:
        """time.monotonic() the host last said fio lives, between its dumps."""

    @property
    def lag_note(self) -> str:
        """While the controller lags behind the hosts: how far (the progress line), else ""."""

    def abandon(self) -> None:
        """End it without asking a host that may be gone."""


@dataclass(frozen=True)
class HostLoss:
    """A host of a run lost (its fio or its session ended badly, or it went quiet): what the
    merge step reports; the engine puts it on the timeline and takes it out of the schedule."""

    host: str
    t: float  # when it last reported, on the series' axis
    phase: str  # "prefill" or "run"
    reason: str
    hosts_active: int  # the hosts left

    @property
    def measured(self) -> bool:
        return self.phase == "run"


class FioRunBase(abc.ABC):
    """A run that is not reached through a session: it never loses one, has no heartbeat
    but its dumps, and abandoning it is stopping it."""

    session_ended = False
    last_beat: float | None = None
    @property
    def lag_note(self) -> str:
        return ""  # one fio, read as it writes: no controller to fall behind

    @abc.abstractmethod
    def stop(self) -> None: ...

    def abandon(self) -> None:
        self.stop()


class Runner(Protocol):
    @property
    def host(self) -> str:
        """The host's name in the plan and in the run directory (hosts/<host>/)."""

    @property
    def powers(self) -> Powers:
        """What this runner can do beyond the core (Powers)."""

    def measure_clock(self) -> tuple[float, float]:
        """The host clock's offset from ours and the round trip, in seconds (Powers.CLOCK;
        (0, 0) without it)."""

    def ping(self, timeout: float) -> bool:
        """Whether the host answers within `timeout` s (Powers.SESSION; True without)."""

    def clock(self) -> float:
        """Now, in epoch seconds, on the runner's clock."""

    def prepare(self, directory: Path, subdirs: Sequence[str]) -> None:
        """Make the workloads' sub-directories of the target directory."""

    def write_job(self, name: str, text: str) -> Path:
        """Keep a job file on the host (and in the run directory), verbatim."""

    def check_job(self, name: str, env: Mapping[str, str]) -> str | None:
        """fio's own check of a job file (--parse-only): its complaint, or None."""

    def confine(self, procs: Path | None) -> None:
        """Start later fio processes inside this cgroup (blkio throttling), or not."""

    def start(self, name: str, env: Mapping[str, str], *, at: float | None = None,
              sections: Sequence[str] = ()) -> FioRun:
        """Start fio on job file `name` (only `sections` of it, when given) at host time
        `at` (epoch seconds; now when None), with the job file's variables in `env`."""

    def fetch_logs(self) -> list[Path]:
        """fio's per-IO logs, brought into the run directory."""

    def run(self, argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
        """Run a command on the host."""

    def agent(self, command: str, args: Sequence[str] = ()) -> subprocess.Popen[bytes]:
        """Start an agent command on the host (assay/agent/), in the host's run directory:
        its stdout streams JSON rows (runners/agent.py `rows`); closing its stdin or killing
        it ends the command there."""

    def close(self) -> None:
        """Nothing of the run left running or kept on the host."""

    def abandon(self) -> None:
        """Close, not asking a host that may be gone (Powers.SESSION; close without)."""


SIGINT_STATUS = 128  # fio's own status when it ended on SIGINT, its final report written


def fio_outcome(rc: int, fio: FioRun, asked_to_end: bool = False) -> tuple[str, str]:
    """How fio's end decides the run: done, or aborted with fio's own reason. `asked_to_end`:
    the timeline ended the load early (`end`), so fio's SIGINT status is its normal end."""
    if rc != 0 and not (asked_to_end and rc == SIGINT_STATUS):
        tail = fio.stderr_tail()
        if "No space left on device" in tail:
            return "aborted", f"the target ran out of space during the run: {tail}"
        if fio.session_ended:  # ssh's 255: not fio's status
            return "aborted", f"the SSH session ended (ssh exit status 255): {tail}"
        return "aborted", f"fio exited with status {rc}: {tail}"
    doc = fio.last_doc or {}
    errors = [f"{j.get('jobname')}: error {j.get('error')}" for j in doc.get("jobs", [])
              if j.get("error")]
    if errors:
        return "aborted", f"fio reported IO errors: {'; '.join(errors[:3])}"
    return "done", ""

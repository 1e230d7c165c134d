"""How a run is asked for (RunOptions) and how it ended (Outcome), and the timeline the
engine drives beside the load."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assay.exitcodes import ExitCode
from assay.metrics.summary import Stats
from assay.plan import Plan
from assay.platforms.base import Platform
from assay.results.rundir import RunDir
from assay.runners import LocalRunner, Runner
from assay.thresholds.evaluate import Result
from assay.timeline import Reach, build


class Timeline(Protocol):
    """Timeline steps run beside the load; `tick` is called several times a second."""

    def start(self, t0: float) -> None: ...
    def tick(self, t: float) -> None: ...
    def finish(self) -> None: ...

    @property
    def failure(self) -> str | None:
        """A step that failed (the run ends aborted with it), or None."""

    def ended(self, t: float) -> str | None:
        """Why the load ends at `t` by the scenario's `timeline.end` (before `duration`)."""


class RunWatcher(Protocol):
    """Sees the run as it goes (assay.observe): the run directory and live verdict once the
    load starts, then each second's rows as they are stored. Called on the engine's thread:
    it must only store them and return."""

    def opened(self, run_dir: Path, live: Any) -> None: ...
    def rows(self, stream: str, rows: list[dict[str, Any]]) -> None: ...


# (plan, platform, run directory, what the steps act on) -> a timeline or None
TimelineFactory = Callable[[Plan, Platform, RunDir, Reach], Timeline | None]
# (host, its directory in the run directory) -> the runner that carries out fio there
RunnerFactory = Callable[[str, Path], Runner]


def default_timeline(plan: Plan, platform: Platform, rd: RunDir,
                     reach: Reach) -> Timeline | None:
    """The scenario's own `timeline.steps` (assay.timeline), so no caller can forget them."""
    return build(plan, platform, rd, reach)


@dataclass
class RunOptions:
    results_root: Path
    keep: bool = False
    fresh: bool = False
    force: bool = False
    json_mode: bool = False
    parent: str | None = None  # a search or sweep this run belongs to
    timeline: TimelineFactory | None = None
    runner: RunnerFactory = LocalRunner
    stop_early: bool = False  # end as failed once a threshold has failed for good
    watcher: RunWatcher | None = None  # `assay run --metrics` (assay.observe)


@dataclass
class Outcome:
    status: str  # passed / completed / failed / incomplete / aborted / interrupted
    run_dir: Path
    reason: str = ""
    stats: dict[str, Stats] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)

    @property
    def exit_code(self) -> ExitCode:
        return {"passed": ExitCode.PASSED, "completed": ExitCode.PASSED,
                "failed": ExitCode.FAILED, "incomplete": ExitCode.ABORTED,
                "aborted": ExitCode.ABORTED, "interrupted": ExitCode.INTERRUPTED}[self.status]


class Interrupted(Exception):
    pass


def on_signal(signum: int, frame: Any) -> None:
    raise Interrupted()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait for the end of the block (then act): a run directory is never
    left without its first record."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

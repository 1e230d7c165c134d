"""What an action gets while it runs: the platform, the run's blkio group, a time budget.

An action runs in its own thread beside the load. Everything that can block (a command, a
wait) goes through the context, so the step's `timeout` and the end of the run stop it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.hosts.inventory import Host
from assay.integrity.session import Verifies
from assay.platforms.base import Platform
from assay.platforms.fsbase import FsPlatform, StepTimeout, run_command
from assay.postgres.servers import Running
from assay.scenario.models import StepBase


class HostWatch(Protocol):
    """A cluster run's view of its hosts while it runs (cluster/group.py's RunnerGroup)."""

    loss_s: float  # silent this long while another host reports: lost

    def is_lost(self, host: str) -> bool: ...

    def silence(self, host: str) -> float:
        """Seconds since the host last reported."""
        ...

    def rejoin(self, host: str) -> str:
        """A recovered host back into the load (host_recover): what restarted, or ""."""
        ...


class Throttles(Protocol):
    """The run's blkio groups, one per host (participants/blkio.py): what `throttle` caps."""

    def device(self, asked: str | int | None) -> str:
        """A step's device: a node, an index into the platform's devices, or `target`."""
        ...

    def limit(self, device: str, *, read_iops: int = 0, write_iops: int = 0,
              read_bps: int = 0, write_bps: int = 0) -> None:
        """The caps on `device` on every active host; 0 removes one (ValueError if not)."""
        ...

    def in_force(self) -> dict[str, dict[str, str]]:
        """The caps each active host has in force, as it reports them."""
        ...


class Stopped(Exception):
    """The run ended while the step was still going."""


@dataclass
class ActionContext:
    platform: Platform
    group: Throttles | None
    step: StepBase
    step_name: str
    n: int  # occurrence, 1-based
    t: float  # load seconds when the step started
    run_id: str
    stop: threading.Event
    deadline: float | None = None  # time.monotonic() by which the step must end
    details: dict[str, Any] = field(default_factory=dict)  # recorded in the step's event
    hosts: dict[str, Host] = field(default_factory=dict)  # a cluster run's inventory hosts
    watch: HostWatch | None = None  # a cluster run's hosts, as they report
    databases: Mapping[str, Running] = field(default_factory=dict)  # running postgres, by name
    verifier: Verifies | None = None  # integrity mode's writers (the verify action)

    @property
    def variables(self) -> dict[str, Any]:
        """Template variables of this step, e.g. for `command` actions and command platforms."""
        base = self.platform.variables() if isinstance(self.platform, FsPlatform) else \
            {"path": str(self.platform.directory or "")}
        return {**base, "run_id": self.run_id, "t": f"{self.t:.0f}", "step": self.step_name,
                "n": self.n}

    @property
    def fs(self) -> FsPlatform:
        assert isinstance(self.platform, FsPlatform)  # plan validation made sure
        return self.platform

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def __call__(self, cmd: Sequence[str] | str) -> str:
        """Run a command within the step's time budget (the `Runner` of platform hooks)."""
        if self.stop.is_set():
            raise Stopped()
        left = self.remaining()
        if left is not None and left <= 0:
            raise StepTimeout("the step ran out of time")
        return run_command(cmd, timeout=left)

    def sleep(self, seconds: float) -> None:
        """Wait; Stopped when the run ends, StepTimeout past the deadline."""
        left = self.remaining()
        if left is not None and left < seconds:
            if self.stop.wait(max(left, 0)):
                raise Stopped()
            raise StepTimeout(f"still waiting after the step's timeout "
                              f"({self.step.timeout:g}s)")
        if self.stop.wait(seconds):
            raise Stopped()

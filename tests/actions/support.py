"""Building what the timeline gives an action: a platform on a real filesystem and a context."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from assay.actions.context import ActionContext, Throttles
from assay.platforms import driver
from assay.platforms.base import Platform
from assay.scenario.models import StepBase, Target
from tests.realfs import Machine


def context(platform: Platform, step: StepBase, *, group: Throttles | None = None,
            timeout: float | None = None, name: str = "step", n: int = 1, t: float = 0.0,
            run_id: str = "run-1") -> ActionContext:
    return ActionContext(platform=platform, group=group, step=step, step_name=name, n=n, t=t,
                         run_id=run_id, stop=threading.Event(),
                         deadline=time.monotonic() + timeout if timeout else None)


def fs_platform(machine: Machine, fstype: str, *, spares: int = 0, args: tuple[str, ...] = (),
                **options: Any) -> Any:
    """A prepared btrfs or xfs driver on a fresh loop filesystem, with `spares` blank loop
    devices named in target.options.spares."""
    dev, mnt = machine.filesystem(fstype, args=args)
    if spares:
        options["spares"] = [machine.loop() for _ in range(spares)]
    plat = driver(fstype)(Target(platform=fstype, path=str(mnt / "data"), options=options))
    plat.prepare()
    assert plat.devices() == [dev]
    return plat


def local_platform(directory: Path) -> Platform:
    plat = driver("local")(Target(path=str(directory)))
    plat.prepare()
    return plat

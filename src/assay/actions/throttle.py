"""`throttle`: make a device slow for a window — an IOPS or bandwidth cap on the run's IO.

    - {action: throttle, device: 1, read_iops: 200, write_iops: 200, at: 20s, for: 15s}

    - {action: throttle, backfills: 1, recovery_active: 1, at: 20s, for: 60s}    # Ceph

On Ceph the platform's own recovery is throttled instead: `backfills` (osd_max_backfills),
`recovery_active` (osd_recovery_max_active) and `recovery_sleep` (osd_recovery_sleep_hdd) are
set with `ceph config set osd`, and set back to what they were when the window ends.

The cap goes on the run's cgroup v1 blkio group on every active host (participants/blkio.py;
a local run is one host), so it slows exactly the load's IO to that device. When the window
ends (or the run does) the device gets back the caps it had before (`target.throttle` or
none). `device` is a node as the host sees it, or an index into the platform's devices; on a
platform that lists none (hosts of a cluster run, a plain directory) the device under the
host's target: docs/hosts.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, model_validator

from assay.actions.context import ActionContext, Stopped
from assay.platforms.fsbase import ActionFailed, run_command
from assay.scenario.models import Duration, Size, StepBase


class Params(StepBase):
    action: Literal["throttle"] = "throttle"
    device: str | int | None = Field(None, description="node or 1-based index; default: the "
                                                       "platform's first device")
    read_iops: int = Field(0, ge=0)
    write_iops: int = Field(0, ge=0)
    read_bps: Size = Field(0)
    write_bps: Size = Field(0)
    backfills: int | None = Field(None, ge=1, description="Ceph: osd_max_backfills")
    recovery_active: int | None = Field(None, ge=1, description="Ceph: osd_recovery_max_active")
    recovery_sleep: Duration | None = Field(None, ge=0,
                                            description="Ceph: osd_recovery_sleep_hdd")
    window: Duration | None = Field(None, alias="for", gt=0,
                                    description="how long; default: until the run ends")

    @model_validator(mode="after")
    def _some_cap(self) -> Params:
        if not (self.read_iops or self.write_iops or self.read_bps or self.write_bps
                or self.recovery):
            raise ValueError("give at least one of read_iops, write_iops, read_bps, write_bps "
                             "(or on Ceph backfills, recovery_active, recovery_sleep)")
        return self


    @property
    def recovery(self) -> dict[str, float]:
        return {k: v for k in ("backfills", "recovery_active", "recovery_sleep")
                if (v := getattr(self, k)) is not None}


def on_devices(steps: Iterable[StepBase]) -> list[Params]:
    """The `throttle` steps that cap devices (blkio), not Ceph's own recovery."""
    return [s for s in steps if isinstance(s, Params) and not s.recovery]


def requires(p: Params) -> set[str]:
    return {"throttle.recovery"} if p.recovery else set()


def run(p: Params, ctx: ActionContext) -> str:
    if p.recovery:
        return recovery(p, ctx)
    if ctx.group is None:
        raise ActionFailed("throttle needs cgroup v1 blkio (root, /sys/fs/cgroup/blkio)")
    try:
        device = ctx.group.device(p.device)
    except ValueError as e:
        raise ActionFailed(str(e)) from None
    before = next((t for t in ctx.platform.target.throttle if t.device == device), None)
    caps = {"read_iops": p.read_iops, "write_iops": p.write_iops, "read_bps": p.read_bps,
            "write_bps": p.write_bps}
    ctx.details.update({"device": device, **{k: v for k, v in caps.items() if v}})
    failed = True  # until the window ends well: a restore that fails then says so
    try:
        try:
            ctx.group.limit(device, **caps)
        except (OSError, ValueError) as e:
            raise ActionFailed(f"cannot throttle {device}: {e}") from None
        # the window runs from when the caps are in force, not from when a slow host's
        # report of them comes back
        end = time.monotonic() + (p.window if p.window is not None else 1e9)
        ctx.details["hosts"] = ctx.group.in_force()  # as each active host reports it
        ctx.sleep(max(0.0, end - time.monotonic()))
        failed = False
    except Stopped:
        failed = False
    finally:  # the device gets its own caps back, whatever ended the window (also on the
        try:  # hosts that took the cap when another refused it)
            ctx.group.limit(device, read_iops=before.read_iops if before else 0,
                            write_iops=before.write_iops if before else 0,
                            read_bps=before.read_bps if before else 0,
                            write_bps=before.write_bps if before else 0)
        except (OSError, ValueError) as e:
            if not failed:  # else the first failure is the one to tell
                raise ActionFailed(f"cannot give {device} its caps back: {e}") from None
    shown = ", ".join(f"{k} {v}" for k, v in caps.items() if v)
    return f"{device} capped at {shown}" + (f" for {p.window:g}s" if p.window else "")


def recovery(p: Params, ctx: ActionContext) -> str:
    """The platform's recovery limits for the window, then what they were before."""
    platform: Any = ctx.platform
    ctx.details.update(p.recovery)
    before = platform.recovery_limits(ctx, p.recovery)
    ctx.details["before"] = before
    try:
        ctx.sleep(p.window if p.window is not None else 1e9)
    except Stopped:
        pass
    finally:
        platform.restore_limits(run_command, before)
    shown = ", ".join(f"{k} {v:g}" for k, v in p.recovery.items())
    return f"recovery limited to {shown}" + (f" for {p.window:g}s" if p.window else "")

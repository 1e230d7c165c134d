"""`device`: fail, remove, add or replace one of the platform's devices during the load.

    - {action: device, op: replace, device: 2, at: 20s, wait_until: {done: replace}}

`device` is a device node or an index into the platform's devices (1 = the first);
`new_device` (add, replace) defaults to the first spare the platform has. On btrfs the step
lasts until the replace (the rebuild onto the new device) has finished, and fails if the
kernel cancels it; `wait_until: {done: replace}` also waits for a replace started elsewhere.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.actions.context import ActionContext
from assay.platforms.fsbase import ActionFailed
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["device"] = "device"
    op: Literal["fail", "remove", "add", "replace"]
    device: str | int | None = Field(None, description="node or 1-based index; default: the "
                                                       "last data device (add: a spare)")
    new_device: str | None = Field(None, description="add/replace: default the first spare")


def requires(p: Params) -> set[str]:
    return {f"device.{p.op}"}


def pick(devices: list[str], choice: str | int | None, what: str, first: bool = False) -> str:
    """A device by node or 1-based index; by default the last (data devices: fail the newest)
    or, with `first`, the first (spares: use them in order)."""
    if isinstance(choice, int) or (isinstance(choice, str) and choice.isdigit()):
        i = int(choice)
        if not 1 <= i <= len(devices):
            raise ActionFailed(f"{what} {i}: the platform has {len(devices)} "
                               f"({', '.join(devices) or 'none'})")
        return devices[i - 1]
    if choice:
        return choice
    if not devices:
        raise ActionFailed(f"no {what} to choose from: name one")
    return devices[0] if first else devices[-1]


def run(p: Params, ctx: ActionContext) -> str:
    fs = ctx.fs
    if p.op == "add":
        device = p.new_device or pick(fs.spare_devices(), p.device, "spare device", first=True)
        new = None
    else:
        device = pick(fs.members(), p.device, "device")
        new = p.new_device or (pick(fs.spare_devices(), None, "spare device", first=True)
                               if p.op == "replace" else None)
    ctx.details.update({"op": p.op, "device": device, "new_device": new})
    return fs.device_op(ctx, p.op, device, new) or f"{p.op} {device}"

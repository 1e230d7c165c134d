"""`device`: fail, remove, add or replace one of the platform's devices during the load.

    - {action: device, op: replace, device: 2, at: 20s, wait_until: {done: replace}}
    - {action: device, op: fail, device: 2, mode: read, at: 10s}          # faulty lab: EIO
    - {action: device, op: slow, device: 1, latency: 20ms, at: 10s}
    - {action: device, op: corrupt, device: 1, offset: 64MiB, length: 4k, where: backing}
    - {action: device, op: heal, device: 2}                      # no device: heal them all

`device` is a device node or an index into the platform's devices (1 = the first);
`new_device` (add, replace) defaults to the first spare the platform has. On btrfs the step
lasts until the replace (the rebuild onto the new device) has finished, and fails if the
kernel cancels it; `wait_until: {done: replace}` also waits for a replace started elsewhere.

On Ceph the devices are OSDs (`device: osd.3`): `fail` stops one and marks it out, `recover`
starts it and marks it in (platforms/ceph.py).

fail / slow / corrupt / heal act on a faulty lab's devices (`assay lab create ... --faulty`):
the fault server below the loop device fails (EIO), delays or flips the bytes of the IO that
reaches it from then on, until `heal`. `corrupt` flips [offset, offset+length) in what reads
return (`where: read`) or once in the backing file itself (`where: backing`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from assay.actions.context import ActionContext
from assay.platforms.fsbase import ActionFailed
from assay.scenario.models import Duration, Size, StepBase

FAULTS = ("fail", "slow", "corrupt", "heal")


class Params(StepBase):
    action: Literal["device"] = "device"
    op: Literal["fail", "remove", "add", "replace", "slow", "corrupt", "heal", "recover"]
    device: str | int | None = Field(None, description="node or 1-based index; default: the "
                                                       "last data device (add: a spare)")
    new_device: str | None = Field(None, description="add/replace: default the first spare")
    mode: Literal["read", "write", "both"] = Field(
        "both", description="fail / slow: which operations")
    latency: Duration | None = Field(None, gt=0, description="slow: added to each operation")
    offset: Size = Field(0, description="corrupt: first byte flipped")
    length: Size | None = Field(None, gt=0, description="corrupt: how many bytes")
    where: Literal["read", "backing"] = Field(
        "read", description="corrupt: in what reads return, or once in the backing file")

    @model_validator(mode="after")
    def _fault_keys(self) -> Params:
        if self.op == "slow" and self.latency is None:
            raise ValueError("op slow needs `latency` (e.g. 20ms)")
        if self.op == "corrupt" and self.length is None:
            raise ValueError("op corrupt needs `length` (and `offset`, default 0)")
        return self


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
    if p.op in FAULTS and fs.faulty():
        return fault(p, ctx)
    if p.op == "add":
        device = p.new_device or pick(fs.spare_devices(), p.device, "spare device", first=True)
        new = None
    else:
        device = pick(fs.members(), p.device, "device")
        new = p.new_device or (pick(fs.spare_devices(), None, "spare device", first=True)
                               if p.op == "replace" else None)
    ctx.details.update({"op": p.op, "device": device, "new_device": new})
    return fs.device_op(ctx, p.op, device, new) or f"{p.op} {device}"


def fault(p: Params, ctx: ActionContext) -> str:
    """fail / slow / corrupt / heal on a faulty lab; `device` as for the other ops (a node for
    one that has left the filesystem); `heal` without a device heals every one."""
    fs = ctx.fs
    device = "all" if p.op == "heal" and p.device is None else pick(fs.members(), p.device,
                                                                    "device")
    spec = {"mode": p.mode, "latency": p.latency, "offset": p.offset, "length": p.length,
            "where": p.where}
    ctx.details.update({"op": p.op, "device": device, **{k: spec[k] for k in {
        "fail": ("mode",), "slow": ("mode", "latency"), "corrupt": ("offset", "length", "where"),
        "heal": ()}[p.op]}})
    return fs.fault(p.op, device, spec)

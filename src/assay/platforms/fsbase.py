"""What drivers with platform operations share: commands, mount facts, the operation hooks.

Timeline actions call these hooks (`snapshot_create`, `device_op`, `busy`, ...) with a `Runner`
that runs a command inside the step's time budget, so a hung platform command times out the
step instead of the run. A driver implements the hooks for the capabilities it declares in
`actions`; `supports(target)` may narrow or widen that per target (command templates).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from assay.exitcodes import UserError
from assay.hosts.fingerprint import mount_of
from assay.platforms import faulty
from assay.platforms.base import Platform
from assay.platforms.errors import ActionFailed, StepTimeout
from assay.scenario.models import Target

# argv (or a shell string) -> combined output; raises ActionFailed on a non-zero exit
Runner = Callable[[Sequence[str] | str], str]

SNAPSHOT_DIR = ".assay-snapshots"  # inside the target directory, so on the same filesystem


def run_command(cmd: Sequence[str] | str, timeout: float | None = None) -> str:
    """Run a command (a string goes through the shell); its output, or ActionFailed."""
    shell = isinstance(cmd, str)
    shown = cmd if isinstance(cmd, str) else " ".join(cmd)
    try:
        proc = subprocess.run(cmd, shell=shell, capture_output=True, text=True,  # noqa: S602
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise StepTimeout(f"`{shown}` did not finish within {timeout:.0f}s") from None
    except OSError as e:
        raise ActionFailed(f"`{shown}`: {e.strerror}") from None
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        raise ActionFailed(f"`{shown}` exited with status {proc.returncode}: {output[-500:]}")
    return output


def existing_parent(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


class FsPlatform(Platform):
    """A directory on a particular filesystem, with platform operations."""

    fstype = ""
    fault_ops: ClassVar[frozenset[str]] = frozenset(
        {"device.fail", "device.slow", "device.corrupt", "device.heal"})

    @classmethod
    def supports(cls, target: Target) -> frozenset[str]:
        """On a faulty lab (`options.faulty`, see platforms/faulty.py) the driver can also
        fail, slow, corrupt and heal its devices."""
        return cls.actions | cls.fault_ops if target.options.get("faulty") else cls.actions

    def __init__(self, target: Target):
        super().__init__(target)
        self.mount: dict[str, str] = {}
        self.created_snapshots: list[str] = []  # this run's, oldest first

    def check_target(self) -> Path:
        """The target path, refused unless it is on this driver's filesystem."""
        if self.target.device:
            raise UserError(f"platform {self.name} takes a directory `path`, not a device")
        if not self.target.path:
            raise UserError(f"platform {self.name} needs target.path on a {self.fstype} "
                            f"filesystem (or `assay run ... --lab NAME`; see `assay lab create`)")
        faulty = self.target.options.get("faulty")
        if faulty and not isinstance(faulty, dict):
            raise UserError("this scenario needs a faulty lab (target.options.faulty): `assay "
                            "lab create btrfs-raid1 --faulty ...`, then `assay run ... --lab "
                            "NAME`")
        path = Path(self.target.path)
        self.mount = mount_of(existing_parent(path))
        if self.fstype and self.mount.get("fstype") != self.fstype:
            raise UserError(f"target.path {path} is on {self.mount.get('fstype') or 'unknown'}, "
                            f"not {self.fstype} (platform {self.name})")
        return path

    @property
    def mountpoint(self) -> str:
        return self.mount.get("mountpoint", "")

    def devices(self) -> list[str]:
        """Block devices that hold the data (throttle and device actions pick from these)."""
        listed = self.target.options.get("devices")
        if isinstance(listed, list) and listed:
            return [str(d) for d in listed]
        src = self.mount.get("source", "")
        return [src.split("[")[0]] if src.startswith("/dev/") else []

    def variables(self) -> dict[str, Any]:
        return {"path": str(self.directory or self.target.path or ""),
                "mountpoint": self.mountpoint,
                "device": (self.devices() or [""])[0]}

    def facts(self) -> dict[str, Any]:
        return {"platform": self.name, "mount": self.mount, "devices": self.devices()}

    # -- operations (a driver implements those it declares) ---------------------------------
    def snapshot_dir(self) -> Path:
        assert self.directory is not None
        return self.directory / SNAPSHOT_DIR

    def snapshot_create(self, run: Runner, name: str) -> str:
        raise ActionFailed(f"platform {self.name} cannot take snapshots")

    def snapshot_delete(self, run: Runner, name: str) -> str:
        raise ActionFailed(f"platform {self.name} cannot delete snapshots")

    def device_op(self, run: Runner, op: str, device: str, new_device: str | None) -> str:
        raise ActionFailed(f"platform {self.name} cannot {op} a device")

    def faulty(self) -> bool:
        return bool(self.target.options.get("faulty"))

    def fault(self, op: str, device: str, spec: dict[str, Any]) -> str:
        """fail / slow / corrupt / heal a device of a faulty lab (IO from now on)."""
        return faulty.apply(self.target.options, op, device, spec)

    def operation(self, run: Runner, what: str) -> str:
        """Start a background operation: scrub or rebuild."""
        raise ActionFailed(f"platform {self.name} cannot {what}")

    def busy(self, run: Runner, what: str) -> bool:
        """Is the background operation `what` (rebuild, balance, scrub, replace) running?"""
        raise ActionFailed(f"platform {self.name} cannot tell whether a {what} is running")

    def spare_devices(self) -> list[str]:
        """Devices that belong to the target but hold no data (for add / replace)."""
        spares = self.target.options.get("spares")
        members = set(self.members())
        pool = [str(d) for d in spares] if isinstance(spares, list) else []
        every = self.target.options.get("devices")
        if isinstance(every, list):
            pool += [str(d) for d in every if str(d) not in pool]
        return [d for d in pool if d not in members and os.path.exists(d)]

    def members(self) -> list[str]:
        return self.devices()

    def cleanup(self, keep: bool) -> None:
        """Snapshots this run took go, unless the scenario keeps them."""
        if self.target.options.get("keep_snapshots"):
            return
        for name in list(reversed(self.created_snapshots)):
            with contextlib.suppress(ActionFailed):
                self.snapshot_delete(run_command, name)
        self.created_snapshots.clear()
        try:
            if self.directory is not None:
                self.snapshot_dir().rmdir()
        except OSError:
            pass

"""btrfs: the target is a subvolume; snapshots, per-subvolume compression, multi-device raid.

Target options:
  compression: zstd            compression of the target subvolume (none, zlib, lzo, zstd)
  subvolumes: {name: {compression: zstd}}   sub-volumes inside the target (workload `subdir`)
  devices: [/dev/loopN, ...]   the platform's devices (a lab fills this in)
  spares:  [/dev/loopM]        devices for `device add` / `replace`
  keep_snapshots: true         leave the snapshots this run took (default: delete at the end)
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any, ClassVar

from assay.exitcodes import UserError
from assay.platforms import faulty
from assay.platforms.fsbase import ActionFailed, FsPlatform, Runner, run_command

SUBVOLUME_INODE = 256  # the root directory of every btrfs subvolume has this inode number
COMPRESSION = ("none", "zlib", "lzo", "zstd")


def is_subvolume(path: Path) -> bool:
    return path.is_dir() and os.stat(path).st_ino == SUBVOLUME_INODE


class Driver(FsPlatform):
    name: ClassVar[str] = "btrfs"
    fstype = "btrfs"
    actions: ClassVar[frozenset[str]] = frozenset({
        "snapshot", "snapshot.delete", "device.remove", "device.add", "device.replace",
        "scrub", "rebuild", "done.rebuild", "done.balance", "done.scrub", "done.replace"})

    def prepare(self) -> Path:
        path = self.check_target()
        if not path.exists():
            # a subvolume, not a plain directory, so that it can be snapshotted
            path.parent.mkdir(parents=True, exist_ok=True)
            self._sh(["btrfs", "subvolume", "create", str(path)])
        elif not is_subvolume(path):
            raise UserError(f"target.path {path} is a plain directory, not a btrfs subvolume, so "
                            f"it cannot be snapshotted; name a path that does not exist yet and "
                            f"assay creates it as a subvolume")
        self._compression(path, self.target.options.get("compression"))
        subvolumes = self.target.options.get("subvolumes") or {}
        if not isinstance(subvolumes, dict):
            raise UserError("target.options.subvolumes: a mapping name -> {compression: ...}")
        for name, opts in subvolumes.items():
            sub = path / str(name)
            if not sub.exists():
                self._sh(["btrfs", "subvolume", "create", str(sub)])
            self._compression(sub, (opts or {}).get("compression"))
        self.directory = path
        return path

    def _compression(self, path: Path, algo: Any) -> None:
        if algo is None:
            return
        if str(algo) not in COMPRESSION:
            raise UserError(f"btrfs compression {algo!r}: use one of {', '.join(COMPRESSION)}")
        # `none` says "never compress" even under a compress mount option
        self._sh(["btrfs", "property", "set", str(path), "compression", str(algo)])

    def _sh(self, argv: list[str]) -> str:
        try:
            return run_command(argv, timeout=120)
        except ActionFailed as e:
            raise UserError(f"platform btrfs: {e}") from None

    def members(self) -> list[str]:
        if not self.mountpoint:
            return []
        try:
            out = run_command(["btrfs", "filesystem", "show", self.mountpoint], timeout=30)
        except ActionFailed:
            return []
        return re.findall(r"\bpath (/dev/\S+)", out)

    def devices(self) -> list[str]:
        return self.members() or super().devices()

    def devid(self, device: str) -> str:
        """btrfs's id of member `device` (the node itself if it is not a member)."""
        with contextlib.suppress(ActionFailed):
            out = run_command(["btrfs", "filesystem", "show", self.mountpoint], timeout=30)
            for found, path in re.findall(r"\bdevid\s+(\d+)\b.*\bpath (/dev/\S+)", out):
                if path == device:
                    return str(found)
        return device

    def facts(self) -> dict[str, Any]:
        facts = super().facts()
        if self.directory is not None:
            facts["compression"] = {p.name or str(p): _property(p) for p in
                                    [self.directory, *(self.directory / str(n) for n in
                                     (self.target.options.get("subvolumes") or {}))]}
        with contextlib.suppress(ActionFailed):
            facts["profiles"] = run_command(["btrfs", "filesystem", "df", self.mountpoint],
                                            timeout=30).splitlines()
        return facts

    # -- operations -------------------------------------------------------------------------
    def snapshot_create(self, run: Runner, name: str) -> str:
        self.snapshot_dir().mkdir(exist_ok=True)
        out = run(["btrfs", "subvolume", "snapshot", "-r", str(self.directory),
                   str(self.snapshot_dir() / name)])
        self.created_snapshots.append(name)
        return out

    def snapshot_delete(self, run: Runner, name: str) -> str:
        out = run(["btrfs", "subvolume", "delete", str(self.snapshot_dir() / name)])
        if name in self.created_snapshots:
            self.created_snapshots.remove(name)
        return out

    def device_op(self, run: Runner, op: str, device: str, new_device: str | None) -> str:
        mnt = self.mountpoint
        if op == "remove":  # relocates the device's data first: returns when that is done
            return run(["btrfs", "device", "remove", device, mnt])
        if op == "add":
            return run(["btrfs", "device", "add", "-f", device, mnt])
        if op == "replace":
            # in the foreground (-B): the step lasts as long as the rebuild, and a replace the
            # kernel cancels (ENOSPC, a read error) fails the step. In the background, a status
            # check can run before the forked child has even started the replace.
            # The source by devid: naming its node makes btrfs read its super block, which a
            # dead disk cannot give. A failing source (a faulty lab's `device fail`) is read
            # only where no other copy exists (-r), as one would replace a dead disk.
            assert new_device
            avoid = ["-r"] if self.faulty() and _faulted(self.target.options, device) else []
            return run(["btrfs", "replace", "start", "-B", "-f", *avoid,
                        self.devid(device), new_device, mnt])
        raise ActionFailed(f"btrfs cannot {op} a device")

    def operation(self, run: Runner, what: str) -> str:
        # foreground, like replace: the step lasts as long as the operation and sees its result
        if what == "scrub":
            return run(["btrfs", "scrub", "start", "-B", self.mountpoint])
        if what == "rebuild":  # rewrite every chunk so each has its copies (after add/remove)
            return run(["btrfs", "balance", "start", "--full-balance", self.mountpoint])
        raise ActionFailed(f"btrfs cannot {what}")

    def busy(self, run: Runner, what: str) -> bool:
        mnt = self.mountpoint
        if what == "scrub":
            return "running" in run(["btrfs", "scrub", "status", mnt]).lower()
        if what in ("replace", "rebuild"):
            status = run(["btrfs", "replace", "status", "-1", mnt])
            if "% done" in status:
                return True
            if "canceled" in status or "error" in status.lower():
                raise ActionFailed(f"btrfs replace: {status}")
        if what in ("balance", "rebuild"):
            # exit status 1 while a balance runs or is paused; 0 when there is none
            return "No balance found" not in run(["sh", "-c",
                                                  f"btrfs balance status '{mnt}' || true"])
        return False


def _faulted(options: dict[str, Any], device: str) -> bool:
    return faulty.faulted(options, device)


def _property(path: Path) -> str:
    try:
        out = run_command(["btrfs", "property", "get", str(path), "compression"], timeout=30)
    except ActionFailed:
        return "?"
    return out.split("=", 1)[1].strip() if "=" in out else "none"

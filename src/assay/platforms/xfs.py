"""XFS: a directory on XFS; a snapshot is a reflink copy of the data files (shared extents).

A reflink copy is what copy-on-write platforms do for a snapshot: no data is copied, and every
later write to a shared extent must go elsewhere. Needs XFS made with reflink=1 (the default of
current mkfs.xfs).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import ClassVar

from assay.exitcodes import UserError
from assay.platforms.fsbase import SNAPSHOT_DIR, FsPlatform, Runner


class Driver(FsPlatform):
    name: ClassVar[str] = "xfs"
    fstype = "xfs"
    actions: ClassVar[frozenset[str]] = frozenset({"snapshot", "snapshot.delete"})

    def prepare(self) -> Path:
        path = self.check_target()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create target directory {path}: {e.strerror}") from None
        self.directory = path
        return path

    def snapshot_create(self, run: Runner, name: str) -> str:
        assert self.directory is not None
        dest = self.snapshot_dir() / name
        dest.mkdir(parents=True)
        entries = [str(p) for p in sorted(self.directory.iterdir()) if p.name != SNAPSHOT_DIR]
        try:
            out = run(["cp", "-a", "--reflink=always", "-t", str(dest), *entries]) \
                if entries else ""
        except BaseException:  # no reflink, a full disk: leave no half-made copy behind
            shutil.rmtree(dest, ignore_errors=True)
            with contextlib.suppress(OSError):
                self.snapshot_dir().rmdir()
            raise
        self.created_snapshots.append(name)
        return out or f"reflinked {len(entries)} entries into {dest}"

    def snapshot_delete(self, run: Runner, name: str) -> str:
        shutil.rmtree(self.snapshot_dir() / name)
        if name in self.created_snapshots:
            self.created_snapshots.remove(name)
        return f"removed {name}"

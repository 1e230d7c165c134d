"""One run per target: two runs on the same files would both prefill and measure them, and
both report a verdict on IO that was not theirs.

A lock file in the target directory (or beside a raw device's manifest), held with flock for
the life of the run: the kernel releases it when the process ends, however it ends, so a
crashed run never leaves a target locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import IO

from assay.exitcodes import UserError

LOCK_NAME = ".assay-lock"


class TargetLock:
    def __init__(self, directory: Path):
        self.file = directory / LOCK_NAME
        self._fh: IO[str] | None = None

    def acquire(self, holder: str) -> TargetLock:
        """Hold the target for `holder` (what a refused run is told); UserError if another
        process holds it."""
        fh = open(self.file, "a+", encoding="utf-8")  # noqa: SIM115 - held until release
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            other = fh.read().strip() or "another process"
            fh.close()
            raise UserError(f"the target {self.file.parent} is in use by {other}: wait for that "
                            f"run to end, or choose another target") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"assay run {holder} (pid {os.getpid()}, since "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S')})\n")
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is None:
            return
        with contextlib.suppress(OSError):
            self.file.unlink()  # before unlocking: a waiter never locks a file on its way out
        self._fh.close()
        self._fh = None

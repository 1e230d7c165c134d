"""What every platform driver provides."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from assay.exitcodes import UserError
from assay.scenario.models import Target


class Platform:
    """A place to run IO. The base class handles a plain directory."""

    name: ClassVar[str] = "local"
    actions: ClassVar[frozenset[str]] = frozenset()  # timeline actions it can carry out

    def __init__(self, target: Target):
        self.target = target
        self.directory: Path | None = None
        self.temporary = False

    @classmethod
    def supports(cls, target: Target) -> frozenset[str]:
        """The timeline actions this driver can carry out for `target`."""
        return cls.actions

    def prepare(self) -> Path:
        """Make the data directory ready; returns it."""
        if self.target.device:
            raise UserError(f"platform {self.name} takes a directory `path`, not a device")
        if self.target.path:
            d = Path(self.target.path)
            if not d.exists() and not d.parent.is_dir():
                # a mistyped path would land on whatever disk holds its first existing parent
                raise UserError(f"target directory {d} does not exist, nor does {d.parent}: "
                                f"create it first (a typo would put the data on another disk)")
            try:
                d.mkdir(exist_ok=True)
            except OSError as e:
                raise UserError(f"cannot create target directory {d}: {e.strerror}") from None
        else:
            d = Path(tempfile.mkdtemp(prefix="assay-", dir=os.environ.get("ASSAY_TMPDIR")))
            self.temporary = True
        self.directory = d
        return d

    def direct_io(self) -> bool:
        """O_DIRECT if the scenario asks or the filesystem supports it (tmpfs does not)."""
        if self.target.direct is not None:
            return self.target.direct
        assert self.directory is not None
        return supports_direct_io(self.directory)

    def open_hosts(self, scenario: str, files: list[tuple[str, int]],
                   force: bool) -> dict[str, str]:
        """A cluster run's hosts are ready, before any IO: make what the platform holds for
        the hosts' `files` (Ceph: an RBD image per instance); the variables fio needs there."""
        return {}

    def watch(self, run_dir: Path) -> Any:
        """The platform's own state as a series in `run_dir` on the run's clock (start, tick,
        finish, as a timeline); None where the platform reports none."""
        return None

    def facts(self) -> dict[str, Any]:
        return {"platform": self.name}

    def cleanup(self, keep: bool) -> None:
        """Called at the end of every run, also a failed one."""


def supports_direct_io(directory: Path) -> bool:
    probe = directory / ".assay-odirect-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | getattr(os, "O_DIRECT", 0), 0o600)
        os.close(fd)
        return True
    except OSError as e:
        if e.errno == errno.EINVAL:
            return False
        raise
    finally:
        probe.unlink(missing_ok=True)

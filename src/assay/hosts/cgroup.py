"""cgroup v1 blkio groups: run fio inside one so its IO can be throttled per device.

The blkio throttle limits IO that processes *in the group* submit to a device, so fio must be
in the group before it forks its jobs; FioProcess puts the child in the group before exec.
A throttled loop device gives a platform of known capacity for tests and benchmarks, and the
`throttle` action slows a device for a window during a run.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

BLKIO_ROOT = Path(os.environ.get("ASSAY_BLKIO_ROOT", "/sys/fs/cgroup/blkio"))
LIMIT_FILES = {
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
}


def available() -> bool:
    """cgroup v1 blkio is mounted and writable (root)."""
    return (BLKIO_ROOT / LIMIT_FILES["read_iops"]).exists() and os.access(BLKIO_ROOT, os.W_OK)


def device_numbers(device: str) -> str:
    """`major:minor` of a block device node."""
    st = os.stat(device)
    if not stat.S_ISBLK(st.st_mode):
        raise ValueError(f"{device} is not a block device")
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


@dataclass
class BlkioGroup:
    name: str  # e.g. "assay/20261122-101010_x_abc123"
    per_host = False  # a cluster run's groups, one per host (cluster/throttle.py)

    @property
    def path(self) -> Path:
        return BLKIO_ROOT / self.name

    def create(self) -> BlkioGroup:
        self.path.mkdir(parents=True, exist_ok=True)
        return self

    def join(self, pid: int | None = None) -> None:
        (self.path / "cgroup.procs").write_text(str(pid or os.getpid()))

    def limit(self, device: str, *, read_iops: int = 0, write_iops: int = 0, read_bps: int = 0,
              write_bps: int = 0) -> None:
        """Set limits on `device` for this group; 0 removes that limit."""
        numbers = device_numbers(device)
        for key, value in (("read_iops", read_iops), ("write_iops", write_iops),
                           ("read_bps", read_bps), ("write_bps", write_bps)):
            (self.path / LIMIT_FILES[key]).write_text(f"{numbers} {int(value)}")

    def clear(self, device: str) -> None:
        self.limit(device)

    def limits(self) -> dict[str, str]:
        """The caps in force, e.g. {"read_iops": "7:3 400"}; kinds without a cap are left out."""
        out = {k: (self.path / f).read_text().strip() for k, f in LIMIT_FILES.items()}
        return {k: v for k, v in out.items() if v}

    def remove(self) -> None:
        """Move any remaining processes out, then remove the group (and empty parents)."""
        if not self.path.exists():
            return
        procs = (self.path / "cgroup.procs").read_text().split()
        for pid in procs:
            with contextlib.suppress(OSError):  # the process may have exited meanwhile
                (BLKIO_ROOT / "cgroup.procs").write_text(pid)
        try:
            self.path.rmdir()
            parent = self.path.parent
            while parent != BLKIO_ROOT and not any(p.is_dir() for p in parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
        except OSError:
            pass

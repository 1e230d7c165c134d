"""Real block devices, filesystems and blkio groups for tests, each undone when the test ends
(also when it fails): loop devices on sparse images, mounts, tmpfs, cgroup v1 blkio groups.

Test packages use the fixtures by importing them into their conftest.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from assay.hosts import cgroup
from assay.participants.blkio import BlkioGroups, HostGroup
from assay.plan import LOCAL
from assay.runners.local import LocalRunner

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (loop devices, mounts)")
needs_blkio = pytest.mark.skipif(not cgroup.available(),
                                 reason="needs cgroup v1 blkio (root, mounted)")

# mkfs.xfs refuses less than 300 MiB; the images are sparse, so this costs nothing
FS_SIZE = {"xfs": "320M", "btrfs": "256M"}


def sh(*argv: str) -> str:
    return subprocess.run(list(argv), capture_output=True, text=True, check=True).stdout.strip()


class Machine:
    """What a test made on this host, to be undone in reverse."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.loops: list[str] = []
        self.mounts: list[Path] = []

    def loop(self, size: str = "256M") -> str:
        """A fresh loop device on a sparse image, holding nothing."""
        image = self.tmp / f"dev-{uuid.uuid4().hex[:8]}.img"
        subprocess.run(["truncate", "-s", size, str(image)], check=True)
        dev = sh("losetup", "-f", "--show", str(image))
        self.loops.append(dev)
        return dev

    def mkfs(self, fstype: str, *devices: str, args: tuple[str, ...] = ()) -> None:
        if shutil.which(f"mkfs.{fstype}") is None:
            pytest.skip(f"mkfs.{fstype} is not installed")
        subprocess.run([f"mkfs.{fstype}", "-f", *args, *devices], capture_output=True,
                       check=True)

    def mount(self, source: str, *, fstype: str | None = None, options: str | None = None) \
            -> Path:
        mnt = self.tmp / f"mnt-{uuid.uuid4().hex[:8]}"
        mnt.mkdir()
        argv = ["mount", *(["-t", fstype] if fstype else []),
                *(["-o", options] if options else []), source, str(mnt)]
        subprocess.run(argv, check=True, capture_output=True)
        self.mounts.append(mnt)
        return mnt

    def filesystem(self, fstype: str, *, size: str | None = None, args: tuple[str, ...] = (),
                   options: str | None = None) -> tuple[str, Path]:
        """A mounted filesystem on a new loop device: (device, mountpoint)."""
        dev = self.loop(size or FS_SIZE.get(fstype, "256M"))
        self.mkfs(fstype, dev, args=args)
        return dev, self.mount(dev, options=options)

    def tmpfs(self, size: str) -> Path:
        return self.mount("tmpfs", fstype="tmpfs", options=f"size={size}")

    def cleanup(self) -> None:
        for mnt in reversed(self.mounts):
            if subprocess.run(["umount", str(mnt)], capture_output=True).returncode:
                subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        for dev in reversed(self.loops):
            subprocess.run(["losetup", "-d", dev], capture_output=True)


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Machine]:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mounts)")
    m = Machine(tmp_path)
    try:
        yield m
    finally:
        m.cleanup()


MakeBlkio = Callable[..., BlkioGroups]


@pytest.fixture
def blkio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MakeBlkio]:
    """Real cgroup v1 blkio groups of this host, as a run makes them: `blkio(asked=[dev],
    devices=[dev], target="/mnt")` checks the `asked` devices (`target`: the one under
    `target`) and makes the group, with no cap; every group is removed afterwards."""
    if not cgroup.available():
        pytest.skip("needs cgroup v1 blkio (root, mounted)")
    made: list[BlkioGroups] = []
    work = tmp_path_factory.mktemp("blkio")

    def make(asked: Sequence[str] = (), devices: Sequence[str] = (),
             target: str = "/") -> BlkioGroups:
        group = HostGroup(LOCAL, LocalRunner(LOCAL, work), str(cgroup.BLKIO_ROOT),
                          f"assay-test/{uuid.uuid4().hex[:10]}")
        made.append(BlkioGroups({LOCAL: group}, (), devices))
        made[-1].check({LOCAL: target}, asked)
        return made[-1]

    try:
        yield make
    finally:
        for b in made:
            b.remove()


def cgroup_of(pid: int, controller: str = "blkio") -> str:
    """The cgroup path of a process for one v1 controller, from /proc/<pid>/cgroup."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return ""

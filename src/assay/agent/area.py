"""Where a workload's integrity blocks live: one file on the target per writing workload, or
an RBD image (`rbd:POOL/IMAGE`, rbdarea.py) where the target is Ceph RBD."""

from __future__ import annotations

import errno
import mmap
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .block import HEADER, MAGIC

SUBDIR = "assay-integrity"
CHUNK = 2 << 20  # bytes per read of a pass
AHEAD = 4  # reads in flight while a chunk is checked
OFFSETS_KEPT = 100  # per kind of problem and file, the first ones
RBD = "rbd:"  # an area's path that names an RBD image


def block_file(workload: str, host: str | None = None) -> str:
    """A workload's block file, relative to the target. On a host it is named by the host too:
    hosts may share a directory (one NFS export)."""
    return f"{SUBDIR}/{workload}.blk" if host is None else f"{SUBDIR}/{host}.{workload}.blk"


class Device(Protocol):
    """Where blocks are read and written: a file here, or an RBD image (rbdarea.py)."""

    def readinto(self, mv: memoryview, pos: int) -> int: ...
    def write(self, mv: memoryview, pos: int) -> None: ...
    def sync(self) -> None: ...
    def close(self) -> None: ...


class FileDevice:
    def __init__(self, fd: int):
        self.fd = fd

    def readinto(self, mv: memoryview, pos: int) -> int:
        return os.preadv(self.fd, [mv], pos)

    def write(self, mv: memoryview, pos: int) -> None:
        n = os.pwrite(self.fd, mv, pos)
        if n != len(mv):  # a full device: blocks left unwritten must not be journaled
            raise OSError(errno.ENOSPC, f"a short write ({n} of {len(mv)} bytes at {pos})")

    def sync(self) -> None:
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)


@dataclass(frozen=True)
class Area:
    workload: str
    path: Path  # the file on the target
    block: int  # bytes per block
    blocks: int
    writer: int  # the stream's id, in every header

    @property
    def size(self) -> int:
        return self.block * self.blocks

    @property
    def rbd(self) -> str:
        """`POOL/IMAGE` when the blocks live in an RBD image, else ""."""
        text = str(self.path)
        return text[len(RBD):] if text.startswith(RBD) else ""

    def open_read(self, direct: bool) -> tuple[Device, bool]:
        """The area for reading; (device, O_DIRECT used)."""
        if self.rbd:
            from .rbdarea import open_image

            return open_image(self.rbd), True
        fd, used = open_file(self.path, os.O_RDONLY, direct)
        return FileDevice(fd), used

    def open_write(self, direct: bool, create: bool = False) -> tuple[Device, bool]:
        """The area for synchronous writes (O_DSYNC: a write returns once it is durable);
        `create`: made anew (a file; an image is made by the platform driver)."""
        if self.rbd:
            from .rbdarea import open_image

            return open_image(self.rbd), True  # made by the platform driver
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | (os.O_CREAT | os.O_TRUNC if create else os.O_DSYNC)
        fd, used = open_file(self.path, flags, direct)
        return FileDevice(fd), used

    def to_json(self, directory: Path) -> dict[str, Any]:
        path = str(self.path) if self.rbd else str(self.path.relative_to(directory))
        return {"workload": self.workload, "path": path,
                "block_size": self.block, "blocks": self.blocks, "writer": self.writer}

    @classmethod
    def from_json(cls, data: dict[str, Any], directory: Path) -> Area:
        path = str(data["path"])
        return cls(str(data["workload"]), Path(path) if path.startswith(RBD) else directory / path,
                   int(data["block_size"]),
                   int(data["blocks"]), int(data["writer"]))


def writer_id(run_id: str, workload: str) -> int:
    """A stable 63-bit id of one run's stream: blocks of another run or workload do not pass."""
    return zlib.crc32(workload.encode(), zlib.crc32(run_id.encode())) << 31 | \
        zlib.crc32(f"{run_id}/{workload}".encode()) >> 1


def open_file(path: Path, flags: int, direct: bool) -> tuple[int, bool]:
    """Open with O_DIRECT when asked and the filesystem takes it; (fd, direct used)."""
    if direct:
        try:
            return os.open(path, flags | os.O_DIRECT, 0o644), True
        except OSError as e:
            if e.errno != errno.EINVAL:
                raise
    return os.open(path, flags, 0o644), False


def aligned(size: int) -> mmap.mmap:
    """A page-aligned buffer, as O_DIRECT needs."""
    return mmap.mmap(-1, max(size, mmap.PAGESIZE))


def read_blocks(fd: int | Device, mv: memoryview, n: int, bs: int, pos: int) -> set[int]:
    """Read n blocks at pos into mv; the indexes of the blocks that could not be read. A short
    read (a truncated file) leaves zeros: those blocks are lost, not unreadable."""
    dev = FileDevice(fd) if isinstance(fd, int) else fd
    try:
        with mv[:n * bs] as part:  # released even on an error: the caller frees `mv`
            got = dev.readinto(part, pos)
        if got < n * bs:
            mv[got:n * bs] = bytes(n * bs - got)
        return set()
    except OSError as e:
        if e.errno not in (errno.EIO, errno.ENODATA, errno.EUCLEAN):
            raise
    bad = set()
    for i in range(n):  # locate the unreadable blocks
        try:
            with mv[i * bs:(i + 1) * bs] as part:
                dev.readinto(part, pos + i * bs)
        except OSError:
            bad.add(i)
    return bad


def later_writer(area: Area) -> str | None:
    """Why `area` cannot be checked against its run's journal: its file is gone, or a later
    run rewrote it (its blocks would all look misplaced); None when it can be."""
    if str(area.path).startswith(RBD):
        return None  # an image: the pass finds it or not
    if not area.path.is_file():
        return f"{area.path}: the integrity file of workload {area.workload!r} is gone (the " \
               f"target was removed or cleaned)"
    fd, _ = open_file(area.path, os.O_RDONLY, True)
    buf = aligned(area.block)
    try:
        os.preadv(fd, [buf], 0)
        magic, _, _, writer, _ = HEADER.unpack_from(buf, 0)
    except OSError:
        return None  # the pass reports it unreadable
    finally:
        buf.close()
        os.close(fd)
    if magic == MAGIC and writer != area.writer:
        return f"{area.path} now holds another run's blocks (writer {writer:x}, this run " \
               f"{area.writer:x}): a later run on the same target rewrote it"
    return None

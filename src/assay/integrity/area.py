"""Where a workload's integrity blocks live: one file on the target per writing workload."""

from __future__ import annotations

import errno
import mmap
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUBDIR = "assay-integrity"
CHUNK = 2 << 20  # bytes per read of a pass
AHEAD = 4  # reads in flight while a chunk is checked
OFFSETS_KEPT = 100  # per kind of problem and file, the first ones


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

    def to_json(self, directory: Path) -> dict[str, Any]:
        return {"workload": self.workload, "path": str(self.path.relative_to(directory)),
                "block_size": self.block, "blocks": self.blocks, "writer": self.writer}

    @classmethod
    def from_json(cls, data: dict[str, Any], directory: Path) -> Area:
        return cls(str(data["workload"]), directory / str(data["path"]), int(data["block_size"]),
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


def read_blocks(fd: int, mv: memoryview, n: int, bs: int, pos: int) -> set[int]:
    """Read n blocks at pos into mv; the indexes of the blocks that could not be read. A short
    read (a truncated file) leaves zeros: those blocks are lost, not unreadable."""
    try:
        got = os.preadv(fd, [mv[:n * bs]], pos)
        if got < n * bs:
            mv[got:n * bs] = bytes(n * bs - got)
        return set()
    except OSError as e:
        if e.errno not in (errno.EIO, errno.ENODATA, errno.EUCLEAN):
            raise
    bad = set()
    for i in range(n):  # locate the unreadable blocks
        try:
            os.preadv(fd, [mv[i * bs:(i + 1) * bs]], pos + i * bs)
        except OSError:
            bad.add(i)
    return bad

"""The block format of integrity mode.

Every block starts with a header and ends with a CRC-32 of everything before it:

    0  magic      8 bytes  b"ASSAYBLK"
    8  offset     u64      byte offset of the block in its file (catches misdirected IO)
    16 generation u64      the writer's counter when it wrote the block (catches stale data)
    24 writer     u64      the writing stream's id (catches another stream's blocks)
    32 written_ns u64      wall clock of the write, for the report
    40 ...        random payload (incompressible, never deduplicated)
    -4 crc32      u32      zlib CRC-32 of bytes [0, size-4)

Generation 0 is never written: a journal entry 0 means "no expectation" (never acknowledged,
or a write that failed and may have left anything).
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable
from enum import Enum
from typing import Any


def _crc32() -> Callable[[Any], int]:
    """ISA-L's CRC-32 (the same polynomial and values as zlib's, several times faster: it keeps
    the verify pass close to fio's hardware CRC32C), or zlib's where isal is missing."""
    try:
        from isal import isal_zlib

        return isal_zlib.crc32
    except ImportError:  # pragma: no cover - isal is a dependency; zlib gives the same values
        import zlib

        return zlib.crc32


crc32 = _crc32()

MAGIC = b"ASSAYBLK"
HEADER = struct.Struct("<8sQQQQ")
CRC = struct.Struct("<I")
MIN_BLOCK = 512
RESIDUE = 0x2144DF1C  # the CRC-32 of any message followed by its own CRC (little-endian)


class State(str, Enum):  # noqa: UP042 - not StrEnum: the agent runs on Python 3.9
    OK = "ok"
    CORRUPT = "corrupt"  # our block, but its checksum or its address is wrong
    STALE = "stale"  # a valid block of an older generation than acknowledged
    LOST = "lost"  # no block of ours where an acknowledged write should be
    UNREADABLE = "unreadable"  # the read failed (EIO)

    def __str__(self) -> str:
        return str(self.value)


PROBLEMS = (State.LOST, State.STALE, State.CORRUPT, State.UNREADABLE)


def fill(buf: memoryview, at: int, size: int, offset: int, generation: int, writer: int) -> None:
    """Write one block into `buf[at:at+size]`: header, fresh random payload, checksum."""
    buf[at + HEADER.size:at + size - CRC.size] = os.urandom(size - HEADER.size - CRC.size)
    HEADER.pack_into(buf, at, MAGIC, offset, generation, writer, time.time_ns())
    CRC.pack_into(buf, at + size - CRC.size, crc32(buf[at:at + size - CRC.size]))


def classify(buf: memoryview, at: int, size: int, offset: int, expected: int,
             writer: int) -> State:
    """One block read back, against the generation the journal says was acknowledged
    (`expected`; 0 = no expectation: any readable content is ok)."""
    if crc32(buf[at:at + size]) == RESIDUE:
        magic, off, gen, who, _ = HEADER.unpack_from(buf, at)
        if magic != MAGIC:
            return State.LOST if expected else State.OK
        if off != offset or who != writer:
            return State.CORRUPT  # a whole, valid block in the wrong place
        return State.STALE if gen < expected else State.OK
    if not expected:
        return State.OK
    magic, off, _, who, _ = HEADER.unpack_from(buf, at)
    if magic == MAGIC or who == writer or (off == offset and offset):
        return State.CORRUPT  # recognisably ours (the writer id is 63 random bits)
    return State.LOST  # no header of ours at all: the write never landed (or was trimmed)


def generation_of(buf: memoryview, at: int) -> int:
    """The generation a block's header claims (for tests and diagnostics)."""
    return int(HEADER.unpack_from(buf, at)[2])

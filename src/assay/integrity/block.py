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
import zlib
from enum import StrEnum

MAGIC = b"ASSAYBLK"
HEADER = struct.Struct("<8sQQQQ")
CRC = struct.Struct("<I")
MIN_BLOCK = 512


class State(StrEnum):
    OK = "ok"
    CORRUPT = "corrupt"  # our block, but its checksum or its address is wrong
    STALE = "stale"  # a valid block of an older generation than acknowledged
    LOST = "lost"  # no block of ours where an acknowledged write should be
    UNREADABLE = "unreadable"  # the read failed (EIO)


PROBLEMS = (State.LOST, State.STALE, State.CORRUPT, State.UNREADABLE)


def fill(buf: memoryview, at: int, size: int, offset: int, generation: int, writer: int) -> None:
    """Write one block into `buf[at:at+size]`: header, fresh random payload, checksum."""
    buf[at + HEADER.size:at + size - CRC.size] = os.urandom(size - HEADER.size - CRC.size)
    HEADER.pack_into(buf, at, MAGIC, offset, generation, writer, time.time_ns())
    CRC.pack_into(buf, at + size - CRC.size, zlib.crc32(buf[at:at + size - CRC.size]))


def classify(buf: memoryview, at: int, size: int, offset: int, expected: int,
             writer: int) -> State:
    """One block read back, against the generation the journal says was acknowledged
    (`expected`; 0 = no expectation: any readable content is ok)."""
    end = at + size - CRC.size
    if zlib.crc32(buf[at:end]) == CRC.unpack_from(buf, end)[0]:
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

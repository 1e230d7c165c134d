"""fio's verify header, as fio 3.x writes it with `verify=crc32c` (fio's verify.h), so that the
workload's own blocks can be checked after the run without fio (a Jetstress-style checksum
pass over the data files: checksum.py).

Every `verify_interval` bytes of a written IO start with, little-endian:

    0  magic        u16   0xacca
    2  verify_type  u16   5 (crc32c) or 6 (crc32c-intel)
    4  len          u32   bytes the header covers (the interval)
    8  rand_seed    u64   the seed of the data
    16 offset       u64   byte offset of this interval in the file (catches misdirected IO)
    24 time_sec     u32   when the IO was issued
    28 time_nsec    u32
    32 thread       u16   fio's job number
    34 numberio     u16   the job's IO counter
    36 crc32        u32   CRC32C of bytes [0, 36)
    40 data crc32   u32   CRC32C of bytes [44, len)

fio's CRC32C is the Castagnoli CRC without the final inversion: the standard value XOR ~0.
"""

from __future__ import annotations

import functools
import struct
from enum import StrEnum

import crc32c as _crc32c

MAGIC = 0xACCA
TYPES = (5, 6)  # VERIFY_CRC32C, VERIFY_CRC32C_INTEL
HEADER = struct.Struct("<HHIQQIIHHI")  # the verify_header
SIZE = HEADER.size + 4  # the header and the data's CRC32C
HEADER_CRC_SPAN = 36  # offsetof(struct verify_header, crc32)
MIN_INTERVAL = 512


def crc32c(data: bytes | memoryview) -> int:
    """CRC32C as fio computes it (no final inversion)."""
    return int(_crc32c.crc32c(data)) ^ 0xFFFFFFFF


class Fault(StrEnum):
    """Why a block is corrupt: the first check it fails."""

    NO_HEADER = "no header"  # no fio magic where a header was written (zeros, other data)
    BAD_HEADER = "header checksum"  # the header itself was damaged
    MISPLACED = "misplaced"  # a whole, valid header of another offset or size
    BAD_DATA = "data checksum"  # the data does not match the header's CRC32C


@functools.cache
def _spanning(size: int) -> struct.Struct:
    """A block as its header fields, the data CRC and the rest skipped."""
    return struct.Struct(f"{HEADER.format}I{size - SIZE}x")


def check(mv: memoryview, size: int, offset: int) -> Fault | None:
    """One block of `size` bytes read from `offset` of its file: None when its header and
    checksum agree, else the fault."""
    magic, kind, length, _, off, _, _, _, _, hcrc, dcrc = _spanning(size).unpack_from(mv)
    if magic != MAGIC or kind not in TYPES:
        return Fault.NO_HEADER
    if crc32c(mv[:HEADER_CRC_SPAN]) != hcrc:
        return Fault.BAD_HEADER
    if length != size or off != offset:
        return Fault.MISPLACED
    if crc32c(mv[SIZE:size]) != dcrc:
        return Fault.BAD_DATA
    return None


def check_many(mv: memoryview, size: int, offset: int, n: int) -> list[int]:
    """The indexes of the bad blocks among `n` consecutive blocks read from `offset`: the
    headers unpacked in one C call, two CRC calls per good block."""
    bad = []
    at, off = 0, offset
    for i, (magic, kind, length, _, o, _, _, _, _, hcrc, dcrc) in enumerate(
            _spanning(size).iter_unpack(mv[:n * size])):
        if magic != MAGIC or kind not in TYPES or length != size or o != off \
                or crc32c(mv[at:at + HEADER_CRC_SPAN]) != hcrc \
                or crc32c(mv[at + SIZE:at + size]) != dcrc:
            bad.append(i)
        at += size
        off += size
    return bad

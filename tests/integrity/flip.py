"""Flip one byte of chosen integrity blocks in a faulty lab's backing file, where the filesystem
put them (FIEMAP), and say which blocks at which generation (run by a `command` step).

    python flip.py FILE BACKING_IMAGE OUT BLOCK_SIZE BLOCK...
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
import sys

FS_IOC_FIEMAP = 0xC020660B
EXTENT = struct.Struct("=QQQQQLLLL")
HEADER = struct.Struct("=QQLLLL")


def extents(path: str) -> list[tuple[int, int, int]]:
    """(logical, physical, length) of a file's extents, synced first."""
    count = 256
    buf = bytearray(HEADER.pack(0, 2**64 - 1, 1, 0, count, 0) + bytes(EXTENT.size * count))
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
    finally:
        os.close(fd)
    mapped = HEADER.unpack_from(buf)[3]
    return [EXTENT.unpack_from(buf, HEADER.size + i * EXTENT.size)[:3] for i in range(mapped)]


def physical(ext: list[tuple[int, int, int]], logical: int) -> int:
    for lo, phys, length in ext:
        if lo <= logical < lo + length:
            return phys + logical - lo
    raise SystemExit(f"offset {logical} is not mapped")


def main() -> None:
    path, image, out, bs, *blocks = sys.argv[1:]
    size = int(bs)
    ext = extents(path)
    buf = mmap.mmap(-1, size)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    lines = []
    with open(image, "r+b") as img:
        for b in map(int, blocks):
            os.preadv(fd, [buf], b * size)
            generation = struct.unpack_from("<Q", buf, 16)[0]
            at = physical(ext, b * size + 1000)  # in the payload
            img.seek(at)
            byte = img.read(1)
            img.seek(at)
            img.write(bytes([byte[0] ^ 0xFF]))
            lines.append(f"{b} {generation}")
        img.flush()
        os.fsync(img.fileno())
    os.close(fd)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

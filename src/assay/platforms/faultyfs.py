"""The fault server of a faulty lab: a small FUSE filesystem that serves each member's backing
file and fails, slows or corrupts the IO of any of them on request.

    python -m assay.platforms.faultyfs STORE MOUNTPOINT

Every regular file in STORE appears in MOUNTPOINT under the same name, opened in FUSE
`direct_io` mode (no page cache between the loop device and this process, so a fault hits the
next IO that reaches the device). Loop devices sit on the served files; the filesystem above
them sees the faults as real device errors. A `control` file at the root takes one command per
write, applied to IO arriving from then on, and reads back the faults in force as JSON:

    fail MEMBER read|write|both          EIO for those operations (write covers flush/fsync)
    slow MEMBER MS [read|write|both]     add MS milliseconds to each operation
    corrupt MEMBER OFFSET LENGTH read    flip (xor 0xff) those bytes in what reads return
    corrupt MEMBER OFFSET LENGTH backing flip them once, now, in the backing file itself
    heal MEMBER                          end every fault of MEMBER (`heal all`: of every one)

A command it cannot take fails the write with EINVAL. Stopping: unmount MOUNTPOINT (the
process then exits), after the loop devices on it are detached.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

CONTROL = "control"
MODES = ("read", "write", "both")


class BadCommand(ValueError):
    pass


@dataclass
class Fault:
    fail: str = ""  # "", read, write, both
    slow_ms: float = 0.0
    slow: str = "both"
    corrupt: list[tuple[int, int]] = field(default_factory=list)  # (offset, length) on read

    def hits(self, mode: str, op: str) -> bool:
        return mode == "both" or mode == op


class Faults:
    """Faults per member, and the commands that set them (no FUSE here: testable alone)."""

    def __init__(self, store: Path):
        self.store = store
        self.lock = threading.Lock()
        self.by_member: dict[str, Fault] = {}

    def members(self) -> list[str]:
        return sorted(p.name for p in self.store.iterdir() if p.is_file())

    def command(self, line: str) -> None:
        words = line.split()
        if len(words) < 2:
            raise BadCommand(f"{line!r}: want `VERB MEMBER ...`")
        verb, member, args = words[0], words[1], words[2:]
        if verb == "heal" and member == "all" and not args:
            with self.lock:
                self.by_member.clear()
            return
        if member not in self.members():
            raise BadCommand(f"no member {member!r} (members: {', '.join(self.members())})")
        with self.lock:
            fault = self.by_member.setdefault(member, Fault())
            if verb == "fail" and len(args) == 1 and args[0] in MODES:
                fault.fail = args[0]
            elif verb == "slow" and len(args) in (1, 2) and _number(args[0]) >= 0 \
                    and (len(args) == 1 or args[1] in MODES):
                fault.slow_ms = _number(args[0])
                fault.slow = args[1] if len(args) == 2 else "both"
            elif verb == "corrupt" and len(args) == 3 and args[2] in ("read", "backing") \
                    and args[0].isdigit() and args[1].isdigit() and int(args[1]) > 0:
                offset, length = int(args[0]), int(args[1])
                if args[2] == "read":
                    fault.corrupt.append((offset, length))
                else:
                    flip_file(self.store / member, offset, length)
            elif verb == "heal" and not args:
                del self.by_member[member]
            else:
                raise BadCommand(f"cannot {line!r}")

    def status(self) -> dict[str, Any]:
        with self.lock:
            return {m: asdict(f) for m, f in self.by_member.items()}

    def before(self, member: str, op: str) -> None:
        """Raise EIO or sleep as the member's faults say, before an `op` (read, write)."""
        with self.lock:
            fault = self.by_member.get(member)
            if fault is None:
                return
            fail = bool(fault.fail) and fault.hits(fault.fail, op)
            delay = fault.slow_ms / 1000 if fault.hits(fault.slow, op) else 0.0
        if delay:
            time.sleep(delay)
        if fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    def after_read(self, member: str, offset: int, data: bytes) -> bytes:
        with self.lock:
            fault = self.by_member.get(member)
            ranges = list(fault.corrupt) if fault else []
        if not ranges:
            return data
        buf = bytearray(data)
        for start, length in ranges:
            lo, hi = max(start, offset), min(start + length, offset + len(buf))
            for i in range(lo - offset, hi - offset):
                buf[i] ^= 0xFF
        return bytes(buf)


def _number(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return -1.0


def flip_file(path: Path, offset: int, length: int) -> None:
    """Flip (xor 0xff) bytes [offset, offset+length) of a file, in place."""
    fd = os.open(path, os.O_RDWR)
    try:
        data = bytearray(os.pread(fd, length, offset))
        for i in range(len(data)):
            data[i] ^= 0xFF
        os.pwrite(fd, bytes(data), offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def operations(faults: Faults) -> Any:
    from mfusepy import FuseOSError, Operations

    class Served(Operations):
        use_ns = True

        def __init__(self) -> None:
            self.fds: dict[int, tuple[str, int]] = {}
            self.next = 1
            self.fd_lock = threading.Lock()

        def _name(self, path: str) -> str:
            name = path.lstrip("/")
            if name != CONTROL and name not in faults.members():
                raise FuseOSError(errno.ENOENT)
            return name

        def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
            if path == "/":
                return {"st_mode": stat.S_IFDIR | 0o700, "st_nlink": 2}
            name = self._name(path)
            if name == CONTROL:
                return {"st_mode": stat.S_IFREG | 0o600, "st_nlink": 1, "st_size": 0}
            st = os.stat(faults.store / name)
            return {"st_mode": stat.S_IFREG | 0o600, "st_nlink": 1, "st_size": st.st_size,
                    "st_blocks": st.st_blocks, "st_mtime": st.st_mtime_ns,
                    "st_ctime": st.st_ctime_ns, "st_atime": st.st_atime_ns}

        def readdir(self, path: str, fh: int) -> list[str]:
            return [".", "..", CONTROL, *faults.members()]

        def open(self, path: str, flags: int) -> int:
            name = self._name(path)
            fd = -1 if name == CONTROL else os.open(faults.store / name, os.O_RDWR)
            with self.fd_lock:
                handle, self.next = self.next, self.next + 1
                self.fds[handle] = (name, fd)
            return handle

        def release(self, path: str, fh: int) -> int:
            with self.fd_lock:
                _, fd = self.fds.pop(fh, ("", -1))
            if fd >= 0:
                os.close(fd)
            return 0

        def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
            name, fd = self.fds[fh]
            if name == CONTROL:
                return (json.dumps(faults.status()) + "\n").encode()[offset:offset + size]
            faults.before(name, "read")
            return faults.after_read(name, offset, os.pread(fd, size, offset))

        def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
            name, fd = self.fds[fh]
            if name == CONTROL:
                try:
                    faults.command(data.decode(errors="replace").strip())
                except (BadCommand, OSError) as e:
                    print(f"control: {e}", file=sys.stderr, flush=True)
                    raise FuseOSError(errno.EINVAL) from None
                return len(data)
            faults.before(name, "write")
            return os.pwrite(fd, data, offset)

        def fsync(self, path: str, datasync: int, fh: int) -> int:
            name, fd = self.fds[fh]
            if fd >= 0:
                faults.before(name, "write")
                os.fdatasync(fd)
            return 0

        def flush(self, path: str, fh: int) -> int:
            return 0

        def truncate(self, path: str, length: int, fh: int | None = None) -> int:
            if self._name(path) != CONTROL:
                raise FuseOSError(errno.EPERM)
            return 0

        def statfs(self, path: str) -> dict[str, int]:
            st = os.statvfs(faults.store)
            return {k: getattr(st, k) for k in ("f_bsize", "f_frsize", "f_blocks", "f_bfree",
                                                 "f_bavail", "f_files", "f_ffree", "f_namemax")}

    return Served()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m assay.platforms.faultyfs STORE MOUNTPOINT", file=sys.stderr)
        return 2
    from mfusepy import FUSE

    store, mountpoint = Path(argv[0]).resolve(), str(Path(argv[1]).resolve())
    FUSE(operations(Faults(store)), mountpoint, foreground=True, direct_io=True,
         default_permissions=True, fsname="assay-faulty", subtype="assay-faulty")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

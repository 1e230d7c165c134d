"""Integrity blocks in an RBD image (`rbd:POOL/IMAGE`), through Ceph's Python binding on the
host (Debian: python3-rbd, python3-rados): the one place the agent imports something beyond
the standard library, and only for this target (`hosts check` says where it is missing).

librbd's cache is off for these clients: with it, a write is acknowledged from the client's
memory (in ~0.06 ms), not once the OSDs hold it, and the journal would record writes that
could still be lost. A failed call is an OSError (EIO), as a file's would be.
"""

from __future__ import annotations

import contextlib
import errno
from typing import Any

SETTINGS: dict[str, str] = {"conf": "", "client": "admin", "keyring": ""}  # the spec's `rbd`
CONNECT_S = 60


def open_image(spec: str) -> RbdDevice:
    """The image (made by the platform driver, before the run)."""
    return RbdDevice(spec)


class RbdDevice:
    def __init__(self, spec: str):
        try:
            import rados
            import rbd
        except ImportError as e:
            raise OSError(errno.ENOENT, "Ceph's Python binding is not installed on this host "
                                        "(Debian: apt-get install python3-rbd python3-rados)",
                          str(e.name)) from None
        self._rbd: Any = rbd
        pool, _, name = spec.partition("/")
        conf = {"rbd_cache": "false"}
        if SETTINGS.get("keyring"):
            conf["keyring"] = SETTINGS["keyring"]
        self.cluster: Any = None
        self.ioctx: Any = None
        self.image: Any = None
        try:
            self.cluster = rados.Rados(conffile=SETTINGS.get("conf") or "",
                                       rados_id=SETTINGS.get("client") or "admin", conf=conf)
            self.cluster.connect(timeout=CONNECT_S)
            self.ioctx = self.cluster.open_ioctx(pool)
            self.image = rbd.Image(self.ioctx, name)
        except (rados.Error, rbd.Error) as e:
            self.close()
            raise OSError(errno.EIO, f"rbd {spec}: {e}", spec) from None

    def readinto(self, mv: memoryview, pos: int) -> int:
        try:
            data = self.image.read(pos, len(mv))
        except self._rbd.Error as e:
            raise OSError(errno.EIO, f"rbd read at {pos}: {e}") from None
        mv[:len(data)] = data
        return len(data)

    def write(self, mv: memoryview, pos: int) -> None:
        try:
            done = self.image.write(bytes(mv), pos)
        except self._rbd.Error as e:
            raise OSError(errno.EIO, f"rbd write at {pos}: {e}") from None
        if done != len(mv):
            raise OSError(errno.EIO, f"rbd write at {pos}: {done} of {len(mv)} bytes")

    def sync(self) -> None:
        try:
            self.image.flush()
        except self._rbd.Error as e:
            raise OSError(errno.EIO, f"rbd flush: {e}") from None

    def close(self) -> None:
        for part, end in ((self.image, "close"), (self.ioctx, "close"),
                          (self.cluster, "shutdown")):
            if part is not None:
                with contextlib.suppress(Exception):  # closing what may be half-open
                    getattr(part, end)()

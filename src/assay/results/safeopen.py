"""Open a regular file inside a directory, never following a symbolic link out of it.

What `assay serve` and the reports show of a run directory is read through here. The
directory is opened once; every component below it is opened relative to its parent
(openat) with O_NOFOLLOW, so a link anywhere on the way, or one swapped in while the file is
being opened, is refused rather than followed: there is no window between a check and the
open. A name that is empty, `.`, `..`, or holds `/` or NUL is refused before any open.

The last component must be a regular file (not a FIFO, device or directory; it is opened
with O_NONBLOCK so that a FIFO cannot hang the reader). Hard links: a hard link to a file
outside the tree has a path like any other, only its link count tells it apart, so a file
shown or served as written (report.html, scenario.yaml, run.fio, /files/...) must have a
single link (st_nlink == 1; assay never hard-links the files of a run directory). Data a
reader parses into numbers (run.json, series, samples, events) may be hard-linked
(`hard_links_ok`): a results directory backed up with `cp -al` or rsnapshot still renders,
and what is parsed there must already be a record of assay's shape.

Every refusal is a `Refused`, an OSError, so callers that already treat an unreadable file as
missing keep doing so.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Refused(OSError):
    """Not a regular, singly linked file inside the directory (or a name that is no name)."""


def valid_name(name: str) -> bool:
    """One path component that stays where it is: no separator, no `.`/`..`, no NUL."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\x00" not in name


def _check(parts: tuple[str, ...]) -> None:
    for p in parts:
        if not isinstance(p, str) or not valid_name(p):
            raise Refused(errno.EACCES, "not a name inside the directory", str(p))


def _refusal(e: OSError, name: str) -> OSError:
    # ELOOP: the component is a symbolic link (O_NOFOLLOW); ENOTDIR: a link or file where a
    # directory was asked for
    if e.errno in (errno.ELOOP, errno.ENOTDIR):
        return Refused(errno.ELOOP, "a symbolic link, not followed", name)
    return e


class Inside:
    """A directory held open; the files below it are opened relative to it.

    `follow=False` refuses the directory itself when it is a symbolic link (its last
    component; the path above it is the caller's choice, e.g. the results directory)."""

    def __init__(self, path: Path | str, *, follow: bool = True, _fd: int | None = None):
        self.path = Path(path)
        if _fd is not None:
            self.fd = _fd
            return
        flags = _DIR_FLAGS if not follow else _DIR_FLAGS & ~os.O_NOFOLLOW
        try:
            self.fd = os.open(self.path, flags)
        except OSError as e:
            raise _refusal(e, str(path)) from None

    # -- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Inside:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten close does not leak the descriptor
        with contextlib.suppress(OSError, AttributeError):
            self.close()

    # -- opening ----------------------------------------------------------------------------
    def _dir_fd(self, parts: tuple[str, ...]) -> int:
        """A new descriptor of the subdirectory `parts` (the directory itself for none)."""
        _check(parts)
        fd = os.dup(self.fd)
        try:
            for p in parts:
                try:
                    nxt = os.open(p, _DIR_FLAGS, dir_fd=fd)
                except OSError as e:
                    raise _refusal(e, p) from None
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def sub(self, *parts: str) -> Inside:
        """The subdirectory `parts`, itself held open (refused if any part is a link)."""
        return Inside(self.path.joinpath(*parts), _fd=self._dir_fd(parts))

    def open(self, *parts: str, hard_links_ok: bool = False) -> BinaryIO:
        """The regular file `parts` (at least one name), opened for reading in binary;
        refused when hard-linked unless `hard_links_ok` (data that is parsed, not shown)."""
        if not parts:
            raise Refused(errno.EISDIR, "no file named", str(self.path))
        _check(parts)
        parent = self._dir_fd(parts[:-1])
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=parent)
        except OSError as e:
            raise _refusal(e, parts[-1]) from None
        finally:
            os.close(parent)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise Refused(errno.EACCES, "not a regular file", "/".join(parts))
            if st.st_nlink > 1 and not hard_links_ok:  # may be a file from anywhere
                raise Refused(errno.EACCES, "a file with other hard links, not read",
                              "/".join(parts))
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "rb")

    def read_bytes(self, *parts: str) -> bytes:
        with self.open(*parts) as fh:
            return fh.read()

    def read_text(self, *parts: str) -> str:
        """The file as text (undecodable bytes replaced)."""
        return self.read_bytes(*parts).decode("utf-8", "replace")

    def is_file(self, *parts: str) -> bool:
        """Whether `parts` is a file `open` would open."""
        try:
            self.open(*parts).close()
        except OSError:
            return False
        return True

    def names(self, *parts: str) -> list[str]:
        """The entries of the subdirectory `parts`, sorted ([] when it is not a plain
        directory inside)."""
        try:
            fd = self._dir_fd(parts)
        except OSError:
            return []
        try:
            return sorted(os.listdir(fd))
        finally:
            os.close(fd)

    def files(self, subdir: str, name: str) -> Iterator[tuple[str, str]]:
        """(entry, text) of `subdir/<entry>/name` for each entry that holds it as a file
        `open` would open, e.g. ("hosts", "run.fio") -> each host's job file."""
        for entry in self.names(subdir):
            try:
                yield entry, self.read_text(subdir, entry, name)
            except OSError:
                continue

    def same_as(self, path: Path | str) -> bool:
        """Whether `path`, not followed if it is a link, is still this very directory."""
        try:
            now = os.lstat(path)
        except OSError:
            return False
        held = os.fstat(self.fd)
        return stat.S_ISDIR(now.st_mode) and (now.st_dev, now.st_ino) == \
            (held.st_dev, held.st_ino)


def open_file(path: Path | str, *, hard_links_ok: bool = False) -> BinaryIO:
    """One file by its path: refused when its last component is a link, not a regular file
    or (unless `hard_links_ok`) hard-linked; the directories above it are the caller's."""
    p = Path(path)
    with Inside(p.parent) as d:
        return d.open(p.name, hard_links_ok=hard_links_ok)


def read_text(path: Path | str) -> str:
    """`open_file` as text; '' for a file that is missing, unreadable or refused."""
    try:
        with open_file(path) as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def is_symlink(path: Path | str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def own_mark(path: str | Path, *, dir_fd: int | None = None, limit: int = 4096) \
        -> dict[str, Any]:
    """The JSON object of a mark assay wrote beside or in what it made (a temporary target, a
    PostgreSQL copy): a regular file of this user, not a link, at most `limit` bytes.
    FileNotFoundError when there is none; ValueError saying why it is not assay's."""
    try:
        fd = os.open(path, _FILE_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as e:  # ELOOP: a symbolic link
        raise ValueError(f"cannot be read: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > limit:
            raise ValueError("is not assay's")
        raw = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    try:
        mark = json.loads(raw.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is one
        raise ValueError("is not assay's") from None
    if not isinstance(mark, dict):
        raise ValueError("is not assay's")
    return mark

"""What every platform driver provides; and a temporary target, made with assay's mark in it.

A temporary target (no `target.path`) is `$ASSAY_TMPDIR/assay-XXXXXXXX` (mkdtemp), and holds
from its first instant a mark, `.assay-target`: a random token, the boot id and the pid of the
assay that made it. run.json records the token with the directory's device and inode
(`target.made`, runinfo.py). A crashed run's temporary target is removed
(leftovers.py) only when the directory at the recorded path, not followed if a symbolic link,
is that device and inode, ours, and holds a mark with that token whose maker is gone: never
on the word of a record alone, which anyone who can write into the results could craft.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

from assay.exitcodes import UserError
from assay.results.liveness import current_boot_id, effective_status
from assay.results.safeopen import own_mark
from assay.scenario.models import Target

TEMP_PREFIX = "assay-"  # the mkdtemp prefix of a temporary target
MARK = ".assay-target"  # in it: who made it (`made_mark`)
MARK_MAX = 4096  # bytes: a mark is a line of JSON; anything bigger is not one


class Platform:
    """A place to run IO. The base class handles a plain directory."""

    name: ClassVar[str] = "local"
    actions: ClassVar[frozenset[str]] = frozenset()  # timeline actions it can carry out

    def __init__(self, target: Target):
        self.target = target
        self.directory: Path | None = None
        self.temporary = False
        self.made: dict[str, Any] | None = None  # a temporary target's proof (run.json)

    @classmethod
    def supports(cls, target: Target) -> frozenset[str]:
        """The timeline actions this driver can carry out for `target`."""
        return cls.actions

    def prepare(self) -> Path:
        """Make the data directory ready; returns it."""
        if self.target.device:
            raise UserError(f"platform {self.name} takes a directory `path`, not a device")
        if self.target.path:
            d = Path(self.target.path)
            if not d.exists() and not d.parent.is_dir():
                # a mistyped path would land on whatever disk holds its first existing parent
                raise UserError(f"target directory {d} does not exist, nor does {d.parent}: "
                                f"create it first (a typo would put the data on another disk)")
            try:
                d.mkdir(exist_ok=True)
            except OSError as e:
                raise UserError(f"cannot create target directory {d}: {e.strerror}") from None
        else:
            d = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=os.environ.get("ASSAY_TMPDIR")))
            self.temporary = True
            self.made = made_mark(d)
        self.directory = d
        return d

    def direct_io(self) -> bool:
        """O_DIRECT if the scenario asks or the filesystem supports it (tmpfs does not)."""
        if self.target.direct is not None:
            return self.target.direct
        assert self.directory is not None
        return supports_direct_io(self.directory)

    def open_hosts(self, scenario: str, files: list[tuple[str, int]],
                   force: bool) -> dict[str, str]:
        """A cluster run's hosts are ready, before any IO: make what the platform holds for
        the hosts' `files` (Ceph: an RBD image per instance); the variables fio needs there."""
        return {}

    def watch(self, run_dir: Path) -> Any:
        """The platform's own state as a series in `run_dir` on the run's clock (start, tick,
        finish, as a timeline); None where the platform reports none."""
        return None

    def facts(self) -> dict[str, Any]:
        return {"platform": self.name}

    def made_facts(self) -> dict[str, Any]:
        """`made`: the proof that the temporary target is this run's (none for a given path);
        run.json's target records it beside every driver's facts (runinfo.py)."""
        return {"made": dict(self.made)} if self.made else {}

    def cleanup(self, keep: bool) -> None:
        """Called at the end of every run, also a failed one."""


def supports_direct_io(directory: Path) -> bool:
    probe = directory / ".assay-odirect-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | getattr(os, "O_DIRECT", 0), 0o600)
        os.close(fd)
        return True
    except OSError as e:
        if e.errno == errno.EINVAL:
            return False
        raise
    finally:
        probe.unlink(missing_ok=True)


def made_mark(directory: Path) -> dict[str, Any]:
    """Mark `directory`, just made, as this process's: the mark inside it, and what run.json
    records of it (`target.made`: the mark's token, the directory's device and inode)."""
    token = secrets.token_hex(16)
    text = json.dumps({"schema_version": 1, "token": token, "boot_id": current_boot_id(),
                       "pid": os.getpid(), "created": time.time()}) + "\n"
    fd = os.open(directory / MARK, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    st = os.lstat(directory)
    return {"token": token, "dev": st.st_dev, "ino": st.st_ino}


class NotOurs(Exception):
    """The directory at a recorded path is not the one its run made; the message says why."""


class InUse(NotOurs):
    """It is the run's, but the assay that made it still runs (the record lied, or a copy)."""


def remove_made(path: Path, made: dict[str, Any] | None) -> bool:
    """Remove the temporary target a crashed run made at `path`, after checking on disk that
    it is that one (`made`: what its run.json recorded): NotOurs, saying why, if it is not
    (then nothing is touched); False if nothing is there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not isinstance(made, dict) or not isinstance(made.get("token"), str) \
            or not isinstance(made.get("dev"), int) or not isinstance(made.get("ino"), int):
        raise NotOurs("its record holds no proof that assay made it: an older assay's run, "
                      "or not assay's; remove it yourself if it is")
    if not path.is_absolute() or not path.name.startswith(TEMP_PREFIX):
        raise NotOurs("not a name assay gives a temporary target")
    if stat.S_ISLNK(st.st_mode):
        raise NotOurs("a symbolic link (never followed)")
    if not stat.S_ISDIR(st.st_mode):
        raise NotOurs("not a directory")
    if (st.st_dev, st.st_ino) != (made["dev"], made["ino"]):
        raise NotOurs("another directory than the one it made (device and inode differ)")
    if st.st_uid != os.geteuid():
        raise NotOurs("owned by another user")
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        here = os.fstat(fd)
        if (here.st_dev, here.st_ino) != (st.st_dev, st.st_ino):
            raise NotOurs("replaced while it was checked")
        mark = _read_mark(fd)
        if mark.get("token") != made["token"]:
            raise NotOurs("its mark names another run")
        maker = {"status": "running", "pid": mark.get("pid"), "started": mark.get("created"),
                 "boot_id": mark.get("boot_id")}
        if effective_status(maker) == "running":
            raise InUse(f"the assay that made it (pid {mark.get('pid')}) is still running")
        _empty(fd, keep=MARK)  # through the checked directory: a path swapped meanwhile is not
        os.unlink(MARK, dir_fd=fd)  # last: a removal cut short is still known as the run's
    finally:
        os.close(fd)
    again = os.lstat(path)
    if (again.st_dev, again.st_ino) == (st.st_dev, st.st_ino):
        os.rmdir(path)  # empty now; rmdir removes nothing else
    return True


def _read_mark(dir_fd: int) -> dict[str, Any]:
    try:
        return own_mark(MARK, dir_fd=dir_fd, limit=MARK_MAX)
    except FileNotFoundError:
        raise NotOurs(f"no mark of assay in it ({MARK})") from None
    except ValueError as e:
        raise NotOurs(f"its mark {e}") from None


def _empty(fd: int, keep: str | None = None) -> None:
    """Everything in the open directory `fd` (but `keep`) removed, through descriptors: a
    symbolic link in it is removed, never followed."""
    with os.scandir(fd) as entries:
        names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries if e.name != keep]
    for name, is_dir in names:
        if is_dir:
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            try:
                _empty(sub)
            finally:
                os.close(sub)
            os.rmdir(name, dir_fd=fd)
        else:
            os.unlink(name, dir_fd=fd)

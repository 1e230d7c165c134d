"""What SSH leaves behind when assay is killed outright (SIGKILL): the control directories
(`$TMPDIR/assay-ssh-*`, one per host reached) and their ControlMaster processes, which would
otherwise live until ControlPersist runs out. `assay clean` (and `assay run`, before it
starts) ends and removes those whose assay process is gone, and only those: a directory
names its maker in `owner` (hosts/ssh.py); one without (an older assay) goes only when no
process uses it and it is older than a minute, and only when asked (`assay clean`).

A name is no proof: a directory goes only if it is a real directory (a symbolic link is never
followed), this user's, private (0700, as mkdtemp makes it), and holds nothing but what assay
and ssh put there (`owner`, `master.log`, the master's socket); its entries are unlinked one
by one and the directory removed with rmdir, never a tree. Anything else is left, and said.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import tempfile
import time
from pathlib import Path

from assay.hosts.ssh import CONTROL_PREFIX, OWNER, process_id

UNOWNED_AGE_S = 60.0
# what a control directory holds: the maker's mark, the master's log, its socket (and the
# socket's temporary name while ssh binds it: `master.<random>`)
EXPECTED = re.compile(rf"{re.escape(OWNER)}|master|master\.log|master\.[A-Za-z0-9]{{8,32}}")
OWNER_TEXT = re.compile(r"\d+ (\d+|\?)")


def clean(unowned: bool = False) -> list[str]:
    """End and remove the stale control directories of this user; returns what was done."""
    done: list[str] = []
    base = Path(tempfile.gettempdir())
    users = _users()
    for d in sorted(base.glob(f"{CONTROL_PREFIX}*")):
        try:
            st = os.lstat(d)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                continue  # a symbolic link, a file, another user's: not ours
            owner = _owner(d)
            age = time.time() - st.st_mtime
        except OSError:
            continue
        masters = users.get(str(d), [])
        if owner is not None:
            if _alive(owner):
                continue
        elif not unowned or age < UNOWNED_AGE_S or masters:
            continue
        try:
            strange = _strange(d, st)
        except OSError as e:
            strange = f"it cannot be read: {e.strerror}"
        if strange:
            done.append(f"left {d}: not an SSH control directory of assay ({strange})")
            continue
        for pid in masters:  # our own ssh masters, by pid: they serve nobody now
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        if not _remove(d, st):
            continue
        done.append(f"removed the SSH control directory {d}"
                    + (f" and ended its ssh master (pid {', '.join(map(str, masters))})"
                       if masters else ""))
    return done


def _owner(d: Path) -> str | None:
    """The mark's text, if it is one: a regular file of ours saying `<pid> <start>`."""
    try:
        fd = os.open(d / OWNER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return None
        text = os.read(fd, 256).decode("utf-8", errors="replace").strip()
    finally:
        os.close(fd)
    return text if OWNER_TEXT.fullmatch(text) else None


def _strange(d: Path, st: os.stat_result) -> str | None:
    """Why `d` is not a control directory of assay's, or None: it is private and holds only
    what assay and ssh put there (regular files and sockets of ours)."""
    if stat.S_IMODE(st.st_mode) & 0o077:
        return "others may use it: not made private, as assay makes its own"
    for entry in os.scandir(d):
        e = entry.stat(follow_symlinks=False)
        kind_ok = stat.S_ISREG(e.st_mode) or stat.S_ISSOCK(e.st_mode)
        if not EXPECTED.fullmatch(entry.name) or not kind_ok or e.st_uid != os.getuid():
            return f"it holds {entry.name}, which assay does not put there"
    return None


def _remove(d: Path, st: os.stat_result) -> bool:
    """Its entries unlinked through the checked directory, then the directory (rmdir)."""
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        here = os.fstat(fd)
        if (here.st_dev, here.st_ino) != (st.st_dev, st.st_ino):
            return False
        with os.scandir(fd) as entries:
            names = [e.name for e in entries if EXPECTED.fullmatch(e.name)
                     and not e.is_dir(follow_symlinks=False)]
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        os.rmdir(d)  # refuses a directory something was put in meanwhile
    except OSError:
        return False
    return True


def _alive(owner: str) -> bool:
    pid = owner.split()[0]
    return pid.isdigit() and process_id(int(pid)) == owner


def _users() -> dict[str, list[int]]:
    """Control directory -> pids of this user's ssh processes whose ControlPath is in it."""
    out: dict[str, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != os.getuid() or \
                    (entry / "comm").read_text(encoding="utf-8").strip() != "ssh":
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for arg in argv:
            text = arg.decode("utf-8", errors="replace")
            if text.startswith("ControlPath=") and CONTROL_PREFIX in text:
                out.setdefault(str(Path(_unquoted(text.split("=", 1)[1])).parent),
                               []).append(int(entry.name))
    return out


def _unquoted(value: str) -> str:
    """A path as hosts/ssh.py `config_path` gave it to ssh: back as it is on disk."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = re.sub(r'\\(["\\])', r"\1", value[1:-1])
    return value.replace("%%", "%")

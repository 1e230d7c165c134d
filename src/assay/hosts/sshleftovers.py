"""What SSH leaves behind when assay is killed outright (SIGKILL): the control directories
(`$TMPDIR/assay-ssh-*`, one per host reached) and their ControlMaster processes, which would
otherwise live until ControlPersist runs out. `assay clean` (and `assay run`, before it
starts) ends and removes those whose assay process is gone, and only those: a directory
names its maker in `owner` (hosts/ssh.py); one without (an older assay) goes only when no
process uses it and it is older than a minute, and only when asked (`assay clean`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from assay.hosts.ssh import CONTROL_PREFIX, OWNER, process_id

UNOWNED_AGE_S = 60.0


def clean(unowned: bool = False) -> list[str]:
    """End and remove the stale control directories of this user; returns what was done."""
    done: list[str] = []
    base = Path(tempfile.gettempdir())
    users = _users()
    for d in sorted(base.glob(f"{CONTROL_PREFIX}*")):
        try:
            if not d.is_dir() or d.is_symlink() or d.stat().st_uid != os.getuid():
                continue
            owner = (d / OWNER).read_text(encoding="utf-8").strip() \
                if (d / OWNER).exists() else None
            age = time.time() - d.stat().st_mtime
        except OSError:
            continue
        masters = users.get(str(d), [])
        if owner is not None:
            if _alive(owner):
                continue
        elif not unowned or age < UNOWNED_AGE_S or masters:
            continue
        for pid in masters:  # our own ssh masters, by pid: they serve nobody now
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        shutil.rmtree(d, ignore_errors=True)
        done.append(f"removed the SSH control directory {d}"
                    + (f" and ended its ssh master (pid {', '.join(map(str, masters))})"
                       if masters else ""))
    return done


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
                out.setdefault(str(Path(text.split("=", 1)[1]).parent), []).append(
                    int(entry.name))
    return out

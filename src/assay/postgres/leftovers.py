"""A crashed run's databases: their server processes (if any survived the parent-death
signal) and their working copies, found from the run directory's `postgres/*/cluster.json`.

Only what assay made is removed, and a path in the run directory is no proof of it (a crafted
cluster.json could name any directory, and the processes working in it would be killed):

- the copy `pg-NAME.run`, a real directory (a symbolic link is never followed), only with
  the marker its run wrote beside it before making it (`pg-NAME.run.json`, agent/pgdata.py:
  a file of ours naming that copy) and the marker's assay gone; its server's processes are
  ended first;
- its WAL directory `pg-NAME.wal`, only if that marker names it and it holds nothing but WAL;
- the socket directory `assay-pg-*`, only in the temporary directory, where the server's was
  made, and holding nothing but a server's sockets and lock files: those are unlinked and the
  directory removed with rmdir, never a tree.

What is left is said, with why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

from assay.agent import pgserver
from assay.postgres.cluster import SOCKET_PREFIX, kill_all
from assay.results.safeopen import own_mark

SUFFIXES = (".run", ".wal")
MARKER_MAX = 64 << 10  # bytes: a marker is a line of JSON
WAL_ENTRY = re.compile(r"[0-9A-F]{24}(\.partial|\.[0-9A-F]{8}\.backup)?|[0-9A-F]{8}\.history"
                       r"|archive_status|summaries|xlogtemp\.\d+")
SOCKET_ENTRY = re.compile(r"\.s\.PGSQL\.\d+(\.lock)?")


class Left(Exception):
    """Not removed; the message says why."""


def clean(run_dir: Path) -> list[str]:
    done: list[str] = []
    for state in sorted((run_dir / "postgres").glob("*/cluster.json")):
        try:
            info = json.loads(state.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(info, dict):
            continue
        data = Path(info["data"]) if isinstance(info.get("data"), str) else None
        wal = Path(info["wal"]) if isinstance(info.get("wal"), str) else None
        if data is not None and data.name.startswith("pg-") and data.name.endswith(".run") \
                and os.path.lexists(data):
            try:
                done += _copy(run_dir, data, wal)
            except (Left, OSError) as e:
                done.append(f"left {data}: not a PostgreSQL copy made by run {run_dir.name} "
                            f"({e})")
        sock = Path(info["socket"]) if isinstance(info.get("socket"), str) else None
        if sock is not None and sock.name.startswith(SOCKET_PREFIX) and os.path.lexists(sock):
            try:
                _sockets(sock)
                done.append(f"removed the PostgreSQL socket directory {sock} of crashed run "
                            f"{run_dir.name}")
            except (Left, OSError) as e:
                done.append(f"left {sock}: not a socket directory of run {run_dir.name} ({e})")
    return done


def _copy(run_dir: Path, data: Path, wal: Path | None) -> list[str]:
    """The copy and its WAL directory removed, once its marker proves them assay's."""
    _real_directory(data)
    marker = _marker(data)
    named = marker.get("wal")
    if wal is not None and named != str(wal):
        wal = None  # the marker does not name it: not the copy's
    if wal is not None and not (wal.name.startswith("pg-") and wal.name.endswith(".wal")):
        wal = None  # not a name assay gives
    pid = marker.get("pid")
    if isinstance(pid, int) and pid != os.getpid() and _alive(pid):
        raise Left(f"the assay that made it (pid {pid}) is still running")
    killed = kill_all(data)
    shutil.rmtree(data, ignore_errors=True)
    done = [f"removed the PostgreSQL cluster {data} of crashed run {run_dir.name}"
            + (f" ({killed} processes ended)" if killed else "")]
    if wal is not None and os.path.lexists(wal):
        try:
            _real_directory(wal)
            strange = [n for n in os.listdir(wal) if not WAL_ENTRY.fullmatch(n)]
            if strange:
                raise Left(f"it holds {strange[0]}, which is not WAL")
            shutil.rmtree(wal, ignore_errors=True)
            done.append(f"removed the PostgreSQL WAL directory {wal} of crashed run "
                        f"{run_dir.name}")
        except (Left, OSError) as e:
            done.append(f"left {wal}: not the WAL of a copy made by run {run_dir.name} ({e})")
    data.with_name(data.name + ".json").unlink(missing_ok=True)  # its copy's marker
    return done


def _real_directory(path: Path) -> os.stat_result:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise Left("a symbolic link (never followed)")
    if not stat.S_ISDIR(st.st_mode):
        raise Left("not a directory")
    return st


def _marker(data: Path) -> dict[str, Any]:
    """The marker beside the copy, if it is assay's: a regular file of ours naming `data`."""
    try:
        marker = own_mark(data.with_name(data.name + ".json"), limit=MARKER_MAX)
    except FileNotFoundError:
        raise Left(f"no marker {data.name}.json beside it") from None
    except ValueError as e:
        raise Left(f"its marker {e}") from None
    if marker.get("data") != str(data):
        raise Left("its marker names another copy")
    return marker


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def _sockets(sock: Path) -> None:
    """The server's socket directory, emptied of its sockets and locks, removed (rmdir)."""
    if sock.parent != Path(tempfile.gettempdir()):
        raise Left("not in the temporary directory, where assay makes it")
    st = _real_directory(sock)
    try:
        server = pgserver.account()
    except pgserver.Refused:
        server = None
    if st.st_uid not in {os.geteuid(), *([server.pw_uid] if server else [])}:
        raise Left("owned by another user")
    fd = os.open(sock, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        here = os.fstat(fd)
        if (here.st_dev, here.st_ino) != (st.st_dev, st.st_ino):
            raise Left("replaced while it was checked")
        with os.scandir(fd) as it:
            entries = [(e.name, e.stat(follow_symlinks=False).st_mode) for e in it]
        for name, mode in entries:
            if not SOCKET_ENTRY.fullmatch(name) or \
                    not (stat.S_ISSOCK(mode) or stat.S_ISREG(mode)):
                raise Left(f"it holds {name}, which a server does not put there")
        for name, _ in entries:
            os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(sock)

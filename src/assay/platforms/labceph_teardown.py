"""Stopping a Ceph lab's daemons (by their pid files: a reused pid is never ours) and removing
the whole lab: its daemons first, then the lab cluster under it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from assay.exitcodes import UserError
from assay.platforms import labcluster
from assay.platforms.labcephstate import CephLab, load_dir
from assay.platforms.labclusterstate import Cluster


def daemon_pids(lab: CephLab) -> dict[str, int]:
    """The lab's running Ceph daemons by their pid files (a reused pid is not ours)."""
    out: dict[str, int] = {}
    for f in sorted((Path(lab.root) / "run").glob("*.pid")):
        with contextlib.suppress(OSError, ValueError):
            pid = int(f.read_text().strip())
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if cmd and Path(cmd[0].decode(errors="replace")).name.startswith("ceph-") and \
                    lab.conf.encode() in cmd:
                out[f.stem] = pid
    return out


def stop_daemon(lab: CephLab, name: str, sig: int = signal.SIGKILL) -> bool:
    pid = daemon_pids(lab).get(name)
    if pid is None:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists() or \
                Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.05)
    return True


def _unmount(path: str) -> bool:
    """The lab's ceph-fuse mount: unmounted (lazily if busy or its client is gone)."""
    with open("/proc/mounts", encoding="utf-8") as fh:
        if not any(len(f := line.split()) > 2 and f[1] == path for line in fh):
            return False
    try:
        busy = subprocess.run(["umount", path], capture_output=True, check=False,
                              timeout=30).returncode != 0
    except subprocess.TimeoutExpired:
        busy = True
    if busy:
        subprocess.run(["umount", "-l", path], capture_output=True, check=False, timeout=30)
    return True


def destroy(c: Cluster) -> list[str]:
    """Kill the Ceph daemons (SIGKILL: the lab's data goes anyway), then the lab cluster."""
    done: list[str] = []
    with contextlib.suppress(UserError):
        lab = load_dir(Path(c.root))
        if lab.cephfs and _unmount(lab.cephfs):  # first, while its MDS still answers
            done.append(f"unmounted CephFS from {lab.cephfs}")
        pids = daemon_pids(lab)
        for name in pids:
            stop_daemon(lab, name)
        if pids:
            done.append(f"killed {len(pids)} Ceph daemon(s): {', '.join(pids)}")
    return done + labcluster.destroy(c)

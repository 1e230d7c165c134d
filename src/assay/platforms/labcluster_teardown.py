"""Taking a lab cluster's hosts down and back (host_fail, host_recover) and removing the
whole cluster (destroy): exactly what its state names, nothing else."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from assay.platforms.lab import _backs, _is_mounted, _sh
from assay.platforms.labclusterstate import Cluster, ClusterHost


def host_fail(c: Cluster, host: str) -> None:
    """Cut a host off the network (its link goes down), as a failed host would be."""
    h = c.host(host)
    _sh(["ip", "-n", h.netns, "link", "set", "eth0", "down"], f"host_fail {host}")


def host_recover(c: Cluster, host: str) -> None:
    """Bring a cut-off host's link back."""
    h = c.host(host)
    _sh(["ip", "-n", h.netns, "link", "set", "eth0", "up"], f"host_recover {host}")


def _pids(netns: str) -> list[str]:
    return subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True,
                          check=False).stdout.split()


def _kill_netns(h: ClusterHost) -> int:
    """End every process in the host's namespace (its sshd and sessions): all ours."""
    first = _pids(h.netns)
    for sig in ("TERM", "KILL"):
        if pids := _pids(h.netns):
            subprocess.run(["kill", f"-{sig}", *pids], capture_output=True, check=False)
        for _ in range(40):
            if not _pids(h.netns):
                return len(first)
            time.sleep(0.05)
    return len(first)


def destroy(c: Cluster) -> list[str]:
    """Stop, unmount, detach and delete exactly what the cluster's state names."""
    done: list[str] = []
    for h in c.hosts:
        if Path("/run/netns", h.netns).exists():
            n = _kill_netns(h)
            subprocess.run(["ip", "netns", "del", h.netns], capture_output=True, check=False)
            done.append(f"{h.name}: stopped {n} process(es), removed namespace {h.netns}")
        if subprocess.run(["ip", "link", "show", h.veth], capture_output=True,
                          check=False).returncode == 0:
            subprocess.run(["ip", "link", "del", h.veth], capture_output=True, check=False)
        if h.mountpoint and _is_mounted(Path(h.mountpoint)):
            if subprocess.run(["umount", h.mountpoint], capture_output=True,
                              check=False).returncode:
                subprocess.run(["umount", "-l", h.mountpoint], capture_output=True, check=False)
            done.append(f"{h.name}: unmounted {h.mountpoint}")
        if h.loop and h.image and _backs(h.loop, [h.image]):
            subprocess.run(["losetup", "-d", h.loop], capture_output=True, check=False)
            done.append(f"{h.name}: detached {h.loop}")
    if subprocess.run(["ip", "link", "show", c.bridge], capture_output=True,
                      check=False).returncode == 0:
        subprocess.run(["ip", "link", "del", c.bridge], capture_output=True, check=False)
        done.append(f"removed bridge {c.bridge}")
    root = Path(c.root)
    if not any(h.mountpoint and _is_mounted(Path(h.mountpoint)) for h in c.hosts):
        shutil.rmtree(root, ignore_errors=True)
        done.append(f"removed {root}")
    else:
        done.append(f"kept {root}: a filesystem is still mounted under it")
    return done

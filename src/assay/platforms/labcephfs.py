"""CephFS on a Ceph lab: `assay lab create ceph --hosts 4 --cephfs`.

The lab (platforms/labceph.py) plus a metadata server on the first host (beside the mon and
the mgr, as on a Proxmox node), a file system `cephfs` on two small pools (size 3 / min_size 2
like the RBD pool) and a ceph-fuse mount on this machine at <lab>/cephfs: the CephFS path a
user would have mounted, driven like any directory by a `ceph` target with a `path`
(snapshots are `.snap/<name>` directories). FUSE, because this kind of machine has no kernel
CephFS client. The MDS and ceph-fuse write their pid files in the lab's run/ directory, so
`assay lab destroy` unmounts the file system and kills them like the other daemons.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
from pathlib import Path

from assay.exitcodes import UserError
from assay.platforms import labceph
from assay.platforms.labceph import CephLab
from assay.platforms.labcluster import Cluster

FS = "cephfs"
POOLS = (("cephfs.meta", 8), ("cephfs.data", 16))
TOOLS = ("ceph-mds", "ceph-fuse")
READY_S = 180.0


def create(name: str, hosts: int = 4, root: Path | None = None) -> tuple[Cluster, CephLab]:
    """A Ceph lab with CephFS mounted at <lab>/cephfs; on any failure, nothing is left."""
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise UserError(f"--cephfs needs {', '.join(missing)} (Debian: ceph-mds ceph-fuse)")
    c, lab = labceph.create(name, hosts, root)
    try:
        started = time.monotonic()
        add(c, lab)
        lab.bringup_s = round(lab.bringup_s + time.monotonic() - started, 1)
        lab.save()
    except BaseException:
        labceph.destroy(c)
        raise
    return c, lab


def add(c: Cluster, lab: CephLab) -> None:
    """An MDS on the first host, the file system, then the mount."""
    r = Path(lab.root)
    mds = r / "dev" / "mds.a"
    mds.mkdir(parents=True, exist_ok=True)
    with open(lab.conf, "a", encoding="utf-8") as fh:
        fh.write(f"[mds]\nmds data = {r}/dev/mds.$id\nkeyring = {r}/dev/mds.$id/keyring\n")
    labceph.ceph(lab, "auth", "get-or-create", "mds.a", "mon", "allow profile mds", "osd",
                 "allow rw tag cephfs *=*", "mds", "allow", "mgr", "allow profile mds",
                 "-o", str(mds / "keyring"))
    labceph.start_daemon(lab, c.hosts[0].netns, ["ceph-mds", "-i", "a"])
    for pool, pgs in POOLS:
        labceph.ceph(lab, "osd", "pool", "create", pool, str(pgs), str(pgs), "replicated")
        labceph.ceph(lab, "osd", "pool", "set", pool, "min_size", "2")
    labceph.ceph(lab, "fs", "new", FS, POOLS[0][0], POOLS[1][0])
    labceph.ceph(lab, "fs", "set", FS, "standby_count_wanted", "0")  # one MDS is the lab
    _wait_active(lab)
    mnt = r / "cephfs"
    mnt.mkdir(exist_ok=True)
    lab.cephfs = str(mnt)
    lab.save()  # before the mount: destroy unmounts what the state names
    proc = subprocess.run(["ceph-fuse", "-c", lab.conf, "--id", "admin", "-k", lab.keyring,
                           "--pid-file", str(r / "run" / "ceph-fuse.pid"), str(mnt)],
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL, start_new_session=True)
    if proc.returncode != 0 or not mounted(str(mnt)):
        raise UserError(f"ceph-fuse could not mount CephFS at {mnt}: "
                        f"{(proc.stderr or proc.stdout).strip()[-400:]}")
    labceph.wait_healthy(lab, len(c.hosts), READY_S)


def _wait_active(lab: CephLab) -> None:
    end = time.monotonic() + READY_S
    while time.monotonic() < end:
        with contextlib.suppress(UserError, ValueError, KeyError, IndexError):
            fs = json.loads(labceph.ceph(lab, "fs", "dump", "-f", "json"))["filesystems"][0]
            if any(i.get("state") == "up:active" for i in fs["mdsmap"]["info"].values()):
                return
        time.sleep(1)
    raise UserError(f"the CephFS metadata server did not become active within {READY_S:.0f}s "
                    f"(logs in {lab.root}/log)")


def mounted(path: str) -> bool:
    with open("/proc/mounts", encoding="utf-8") as fh:
        return any(line.split()[1] == path for line in fh if len(line.split()) > 2)

"""A hyper-converged Ceph lab: a lab cluster (platforms/labcluster.py) whose hosts also run Ceph.

    assay lab create ceph --hosts 4     ->  <root>/ceph/inventory.ini, <root>/ceph/ceph.conf
    assay run ceph-node-failure --lab ceph
    assay lab destroy ceph

Each host is a network namespace with its own sshd (the lab cluster's), one bluestore OSD on a
sparse file (no LVM, no device-mapper) bound to the host's address and registered as its own
CRUSH host, and the workload's fio (fio's `rbd` engine, librbd). The monitor and the manager
run on the first host, as on a Proxmox node: cutting the *last* host's link takes away its
workload and its OSD, as a powered-off HCI node does (cutting the first would take the only
monitor, and with it the cluster). Settings follow the measured recipe: pool size 3 /
min_size 2 with CRUSH `chooseleaf host`, so with 4 hosts a lost host's data is rebuilt on the
other three; cephx on; `rbd cache = false` (librbd's cache would ack writes from memory);
`osd_recovery_sleep_hdd 0` (file-backed OSDs count as hdd), and lab timers: a lost OSD is
marked down after a 10 s heartbeat grace (Ceph's default 20 s, fixed: not stretched for OSDs
the monitor finds laggy) and out 10 s later (default 10 minutes), so a node failure and its
rebuild take a minute or two, not a quarter of an hour; a requested scrub starts on every
scheduler tick (`osd_scrub_backoff_ratio 0`), two PGs at a time per OSD.

Every daemon starts with `setsid` (none dies with assay's process group) and writes its pid
file in the lab's run/ directory; `ceph.json` is written before each step that creates
something, so `destroy` undoes a half-made lab. Destroy kills the daemons by those pid files,
then the lab cluster goes (its namespaces' remaining processes, links, mounts, files).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.platforms import cephstate, labcluster
from assay.platforms.lab import lab_root
from assay.platforms.labceph_teardown import daemon_pids, destroy, stop_daemon
from assay.platforms.labcephstate import STATE, CephLab, load_dir
from assay.platforms.labcluster import Cluster

__all__ = ["CephLab", "create", "daemon_pids", "destroy", "inventory_of", "is_ceph", "load",
           "load_dir", "start_daemon", "start_osd", "stop_daemon", "summary", "wait_healthy"]

PG_NUM = 32
OSD_BYTES = 10 << 30  # sparse: ~1.3-2 GiB used per OSD with a 1 GiB image x3
HOST_FS = 64 << 20  # each host's small ext4 (its assay_path): fio's files for CephFS-less runs
TOOLS = ("ceph", "ceph-mon", "ceph-mgr", "ceph-osd", "ceph-authtool", "monmaptool", "rbd")
HEARTBEAT_GRACE_S = 10  # the lab's osd_heartbeat_grace: a lost OSD is marked down after it
DOWN_OUT_S = 10  # and out this much later (mon_osd_down_out_interval)
READY_S = 300.0  # a loaded 2-core machine: 16-30 s measured, much more under load

CONF = """\
[global]
fsid = {fsid}
mon host = [v2:{mon}:3300,v1:{mon}:6789]
public network = {subnet}.0/24
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
run dir = {root}/run
admin socket = {root}/run/$name.asok
pid file = {root}/run/$name.pid
log file = {root}/log/$name.log
osd pool default size = 3
osd pool default min size = 2
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 1
mon allow pool delete = true
mon data avail warn = 5
mon osd down out interval = {down_out}
osd heartbeat interval = 2
osd heartbeat grace = {grace}
mon osd adjust heartbeat grace = false
osd scrub backoff ratio = 0
osd max scrubs = 2
mon warn on pool no redundancy = false
[client]
keyring = {root}/keyring
rbd cache = false
admin socket = {root}/run/$name.$pid.asok
log file = {root}/log/$name.$pid.log
[mon]
mon data = {root}/dev/mon.$id
[mgr]
mgr data = {root}/dev/mgr.$id
keyring = {root}/dev/mgr.$id/keyring
[osd]
osd data = {root}/dev/osd$id
keyring = {root}/dev/osd$id/keyring
osd objectstore = bluestore
bluestore block path = {root}/blk/osd$id.img
bluestore block create = true
bluestore block size = {osd_bytes}
bluestore block db path =
bluestore block db create = false
bluestore block wal path =
bluestore block wal create = false
osd memory target = 1073741824
osd recovery sleep hdd = 0
"""


def is_ceph(name: str, root: Path | None = None) -> bool:
    return ((root or lab_root()) / name / STATE).exists()


def inventory_of(name: str, root: Path | None = None) -> Path:
    return (root or lab_root()) / name / "inventory.ini"


def load(name: str, root: Path | None = None) -> tuple[Cluster, CephLab]:
    c = labcluster.load(name, root)
    return c, load_dir(Path(c.root))


def ceph(lab: CephLab, *args: str, timeout: float = 60.0) -> str:
    """A `ceph` command against the lab (from this machine: the bridge reaches every host)."""
    return _run(["ceph", "-c", lab.conf, "--connect-timeout", "20", *args], "ceph", timeout)


def _run(argv: list[str], what: str, timeout: float = 120.0) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UserError(f"{what}: `{' '.join(argv)}` did not finish in {timeout:.0f}s") from None
    if proc.returncode != 0:
        raise UserError(f"{what} failed: `{' '.join(argv)}`: "
                        f"{(proc.stderr or proc.stdout).strip()[-400:]}")
    return proc.stdout.strip()


def start_daemon(lab: CephLab, netns: str, argv: list[str]) -> None:
    """Start a Ceph daemon in a host's namespace, in a session of its own (setsid): it
    forks into the background and writes its pid file; its output goes to the lab's log."""
    log = Path(lab.root) / "log" / "daemons.out"
    with open(log, "ab") as out:
        proc = subprocess.run(["nsenter", f"--net=/run/netns/{netns}", "setsid", *argv,
                               "-c", lab.conf], stdin=subprocess.DEVNULL, stdout=out,
                              stderr=out, timeout=120, check=False)
    if proc.returncode != 0:
        raise UserError(f"`{' '.join(argv)}` failed in {netns}: see {log}")


def _preflight(hosts: int) -> None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise UserError(f"a Ceph lab needs {', '.join(missing)} (Debian: ceph-mon ceph-mgr "
                        f"ceph-osd ceph-common)")
    if hosts < 3:
        raise UserError("--hosts: a Ceph lab needs 3 hosts or more (pool size 3, one copy per "
                        "host); 4 to rebuild a lost host's data on the others")


def create(name: str, hosts: int = 4, root: Path | None = None) -> tuple[Cluster, CephLab]:
    """The lab cluster, then Ceph on it, HEALTH_OK; on any failure, undo what was made."""
    _preflight(hosts)
    started = time.monotonic()
    c = labcluster.create(name, hosts, HOST_FS, root)
    c.kind = "ceph"
    c.save()
    lab = CephLab(name=name, root=c.root, fsid=str(uuid.uuid4()), mon=c.hosts[0].address)
    try:
        lab.save()
        _bring_up(c, lab)
        _write_inventory(c, lab)
        lab.status = "ready"
        lab.bringup_s = round(time.monotonic() - started, 1)
        lab.save()
    except BaseException:
        destroy(c)
        raise
    return c, lab


def _bring_up(c: Cluster, lab: CephLab) -> None:
    r = Path(lab.root)
    for sub in ("dev", "run", "log", "blk"):
        (r / sub).mkdir(exist_ok=True)
    conf = CONF.format(fsid=lab.fsid, mon=lab.mon, subnet=c.subnet, root=lab.root,
                       osd_bytes=OSD_BYTES, grace=HEARTBEAT_GRACE_S, down_out=DOWN_OUT_S)
    for i, h in enumerate(c.hosts):  # each OSD is its own CRUSH host: the lab host's name
        lab.osds[h.name] = i
        conf += f"[osd.{i}]\ncrush location = root=default host={h.name}\n"
    Path(lab.conf).write_text(conf, encoding="utf-8")
    lab.save()
    n1 = c.hosts[0].netns
    mon_keyring = str(r / "mon.keyring")
    _run(["ceph-authtool", "--create-keyring", mon_keyring, "--gen-key", "-n", "mon.",
          "--cap", "mon", "allow *"], "ceph-authtool")
    _run(["ceph-authtool", "--create-keyring", lab.keyring, "--gen-key", "-n", "client.admin",
          "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mds", "allow *",
          "--cap", "mgr", "allow *"], "ceph-authtool")
    _run(["ceph-authtool", mon_keyring, "--import-keyring", lab.keyring], "ceph-authtool")
    monmap = str(r / "monmap")
    _run(["monmaptool", "--create", "--fsid", lab.fsid, "--addv", "a",
          f"[v2:{lab.mon}:3300,v1:{lab.mon}:6789]", monmap], "monmaptool")
    _run(["ceph-mon", "-c", lab.conf, "--mkfs", "-i", "a", "--monmap", monmap, "--keyring",
          mon_keyring], "ceph-mon --mkfs")
    start_daemon(lab, n1, ["ceph-mon", "-i", "a"])
    mgr = r / "dev" / "mgr.x"
    mgr.mkdir(exist_ok=True)
    ceph(lab, "auth", "get-or-create", "mgr.x", "mon", "allow profile mgr", "osd", "allow *",
         "mds", "allow *", "-o", str(mgr / "keyring"))
    start_daemon(lab, n1, ["ceph-mgr", "-i", "x"])
    with ThreadPoolExecutor(max_workers=len(c.hosts)) as pool:  # OSDs in parallel (~5 s each)
        for f in [pool.submit(_make_osd, lab, h.netns, lab.osds[h.name]) for h in c.hosts]:
            f.result()
    for key, value in (("osd_recovery_sleep_hdd", "0"),
                       ("mon_osd_down_out_interval", str(DOWN_OUT_S))):
        ceph(lab, "config", "set", "osd" if key.startswith("osd") else "mon", key, value)
    ceph(lab, "osd", "pool", "create", lab.pool, str(PG_NUM), str(PG_NUM), "replicated")
    ceph(lab, "osd", "pool", "set", lab.pool, "size", "3")
    ceph(lab, "osd", "pool", "set", lab.pool, "min_size", "2")
    _run(["rbd", "-c", lab.conf, "pool", "init", lab.pool], "rbd pool init")
    # made for assay: its driver creates images here without --force (platforms/cephimages.py)
    ceph(lab, "osd", "pool", "application", "set", lab.pool, "rbd", "owner", "assay")
    wait_healthy(lab, len(c.hosts), READY_S)


def _make_osd(lab: CephLab, netns: str, i: int) -> None:
    d = Path(lab.root) / "dev" / f"osd{i}"
    d.mkdir(exist_ok=True)
    osd_uuid = str(uuid.uuid4())
    key = _run(["ceph-authtool", "--gen-print-key"], "ceph-authtool")
    (d / "new.json").write_text(json.dumps({"cephx_secret": key}), encoding="utf-8")
    ceph(lab, "osd", "new", osd_uuid, str(i), "-i", str(d / "new.json"))
    _run(["ceph-osd", "-c", lab.conf, "-i", str(i), "--mkfs", "--key", key, "--osd-uuid",
          osd_uuid], f"ceph-osd --mkfs (osd.{i})", timeout=300)
    (d / "keyring").write_text(f"[osd.{i}]\n\tkey = {key}\n", encoding="utf-8")
    start_osd(lab, netns, i)


def start_osd(lab: CephLab, netns: str, i: int) -> None:
    start_daemon(lab, netns, ["ceph-osd", "-i", str(i)])


def status(lab: CephLab) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ceph(lab, "status", "-f", "json"))
    return data


def wait_healthy(lab: CephLab, osds: int, timeout: float) -> dict[str, Any]:
    """HEALTH_OK, every OSD up and in, every PG active+clean; UserError after `timeout`."""
    end = time.monotonic() + timeout
    st: dict[str, Any] = {}
    while time.monotonic() < end:
        with contextlib.suppress(UserError, ValueError):
            st = status(lab)
            osdmap = st.get("osdmap", {})
            if st.get("health", {}).get("status") == "HEALTH_OK" and cephstate.clean(st) and \
                    osdmap.get("num_up_osds") == osds and osdmap.get("num_in_osds") == osds:
                return st
        time.sleep(1)
    checks = ", ".join(st.get("health", {}).get("checks", {})) or "no answer"
    raise UserError(f"the Ceph lab did not become healthy within {timeout:.0f}s "
                    f"({st.get('health', {}).get('status', 'unknown')}: {checks}); logs in "
                    f"{lab.root}/log")


def _write_inventory(c: Cluster, lab: CephLab) -> None:
    labcluster.write_inventory(c)
    extra = [f"assay_ceph_conf={lab.conf}", f"assay_ceph_keyring={lab.keyring}",
             f"assay_ceph_pool={lab.pool}", "assay_ceph_client=admin",
             f"assay_ceph_lab={lab.root}",
             # the agent's Python on each node: Debian's, which has the RBD binding
             # (python3-rbd) that integrity mode uses on RBD images
             "ansible_python_interpreter=/usr/bin/python3", ""]
    with open(c.inventory, "a", encoding="utf-8") as fh:
        fh.write("\n".join(extra))


def summary(c: Cluster, lab: CephLab) -> dict[str, Any]:
    return {**labcluster.summary(c), "ceph": {**asdict(lab), "conf": lab.conf,
                                              "keyring": lab.keyring, "target": lab.target()}}

"""A lab cluster: N hosts on this machine, each a network namespace with its own sshd.

    assay lab create cluster --hosts 3     ->  <root>/cluster/inventory.ini
    assay lab destroy cluster

Each host gets a namespace `assay-<lab>-n<i>` holding one end of a veth pair, the other end
on a bridge in this machine's namespace; the /24 is chosen in 10.213.0.0/16 among subnets no
interface or route here uses, so the traffic never leaves the machine. In each namespace a
real sshd (Debian's openssh-server) listens only on the host's address, with its own host
key; the lab makes one ed25519 client key and a known_hosts file naming every host key.
Each host has its own small ext4 filesystem on a loop device, mounted under the lab
directory: sshd shares this machine's mount namespace (nsenter switches only the network),
so the "host" sees it at the same path, its `assay_path`.

The state (`cluster.json`) is written before each step that creates something, so destroy
can always undo a half-made cluster, and it touches only what the state names.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

__all__ = ["Cluster", "ClusterHost", "create", "destroy", "host_fail", "host_recover", "load",
           "list_clusters", "summary"]

from assay.exitcodes import UserError
from assay.platforms.lab import NAME, _attach, _sh, lab_root
from assay.platforms.labcluster_teardown import destroy, host_fail, host_recover
from assay.platforms.labclusterstate import STATE, Cluster, ClusterHost

MAX_HOSTS = 32
# each host's filesystem (a sparse image: only what is written takes space): room for the
# built-in cluster scenarios' per-host dataset (oltp-cluster, node-failure: 4 GiB) and the
# margin a run keeps free (tests/cluster/test_space.py keeps the two in step)
DEFAULT_SIZE = 5 << 30
SSHD = "/usr/sbin/sshd"
SSHD_CONFIG = """\
ListenAddress {address}:22
HostKey {hostkey}
PidFile {pidfile}
AuthorizedKeysFile {authorized_keys}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
MaxSessions 64
MaxStartups 64
Subsystem sftp internal-sftp
SetEnv SHLVL=1
"""
# SetEnv SHLVL=1: a host's commands run as on a fresh host. bash started by sshd reads
# ~/.bashrc unless it is a nested shell, and this machine's root's rc files are not the lab
# host's (a `pyenv init` there cost 3 s a command on a loaded machine: most of a short run)


def is_cluster(name: str, root: Path | None = None) -> bool:
    return ((root or lab_root()) / name / STATE).exists()


def load(name: str, root: Path | None = None) -> Cluster:
    path = (root or lab_root()) / name / STATE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"no lab cluster {name!r} in {root or lab_root()}") from None
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {path}: {e}") from None
    data.pop("schema_version", None)
    data["hosts"] = [ClusterHost(**h) for h in data.get("hosts", [])]
    return Cluster(**data)


def list_clusters(root: Path | None = None) -> list[Cluster]:
    base = root or lab_root()
    if not base.is_dir():
        return []
    out = []
    for d in sorted(base.iterdir()):
        if (d / STATE).exists():
            with contextlib.suppress(UserError, TypeError):
                out.append(load(d.name, base))
    return out


def _preflight(name: str, hosts: int) -> None:
    if not NAME.match(name):
        raise UserError(f"lab name {name!r}: lower-case letters, digits, - and _ (max 40)")
    if not 1 <= hosts <= MAX_HOSTS:
        raise UserError(f"--hosts: 1 to {MAX_HOSTS}")
    if os.geteuid() != 0:
        raise UserError("a lab cluster needs root: network namespaces, loop devices, mounts")
    missing = [t for t in ("ip", "nsenter", "ssh-keygen", "mkfs.ext4", "losetup")
               if shutil.which(t) is None]
    if not os.access(SSHD, os.X_OK):
        missing.append(f"{SSHD} (Debian: openssh-server)")
    if missing:
        raise UserError(f"a lab cluster needs {', '.join(missing)}")
    if subprocess.run(["ip", "netns", "list"], capture_output=True,
                      check=False).returncode != 0:
        raise UserError("network namespaces are not available here (`ip netns list` failed)")


SUBNET_LOCK = Path("/run/assay-lab-subnets.lock")


def _hold_subnets() -> IO[str]:
    """A machine-wide lock, held from the choice of a /24 until the bridge has its address:
    two labs made at once (two users, parallel test workers) would otherwise pick the same
    one, since the choice reads what interfaces use."""
    fh = SUBNET_LOCK.open("a", encoding="utf-8")
    fcntl.flock(fh, fcntl.LOCK_EX)
    return fh


def _free_subnet(root: Path) -> str:
    used = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True,
                          check=False).stdout
    used += subprocess.run(["ip", "-4", "route", "show", "table", "all"], capture_output=True,
                           text=True, check=False).stdout
    taken = {c.subnet for c in list_clusters(root)}
    for x in range(1, 255):
        net = f"10.213.{x}"
        if net not in taken and f" {net}." not in f" {used}" and "10.213.0.0/16" not in used:
            return net
    raise UserError("no free /24 left in 10.213.0.0/16 for a lab cluster")


def create(name: str, hosts: int, size: int = DEFAULT_SIZE, root: Path | None = None) -> Cluster:
    """Build the cluster and write its inventory; on any failure, undo what was made."""
    _preflight(name, hosts)
    base = root or lab_root()
    d = base / name
    if (d / STATE).exists() or (d / "state.json").exists():
        raise UserError(f"lab {name!r} already exists ({d}); `assay lab destroy {name}` first")
    tag = "asy" + hashlib.sha1(str(d.resolve()).encode()).hexdigest()[:5]
    clash = [f"namespace assay-{name}-n{i}" for i in range(1, hosts + 1)
             if Path("/run/netns", f"assay-{name}-n{i}").exists()]
    clash += [f"link {tag}br"] if subprocess.run(["ip", "link", "show", f"{tag}br"],
                                                 capture_output=True).returncode == 0 else []
    if clash:  # another lab's (another lab directory?): never touch it
        raise UserError(f"lab cluster {name!r}: {', '.join(clash)} already exist(s) on this "
                        f"machine; destroy that lab first, or choose another --name")
    d.mkdir(parents=True, exist_ok=True)
    d.chmod(0o711)  # not listed by others; traversed by a host's PostgreSQL user (its target)
    held = _hold_subnets()
    c = Cluster(name=name, root=str(d), subnet=_free_subnet(base), bridge=f"{tag}br",
                size=size)
    c.save()
    try:
        _sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"assay-lab-{name}",
             "-f", c.key], "ssh-keygen")
        shutil.copyfile(f"{c.key}.pub", d / "authorized_keys")
        _sh(["ip", "link", "add", c.bridge, "type", "bridge"], "ip link add (bridge)")
        _sh(["ip", "addr", "add", f"{c.subnet}.1/24", "dev", c.bridge], "ip addr add")
        held.close()  # the bridge holds the subnet now: the next lab's choice sees it
        _sh(["ip", "link", "set", c.bridge, "up"], "ip link set up")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
        known = []
        for i in range(1, hosts + 1):
            h = ClusterHost(name=f"n{i}", netns=f"assay-{name}-n{i}", veth=f"{tag}h{i}",
                            address=f"{c.subnet}.{10 + i}")
            c.hosts.append(h)
            c.save()
            known.append(_make_host(c, h))
        Path(c.known_hosts).write_text("".join(known), encoding="utf-8")
        for h in c.hosts:
            _wait_listening(h.address)
        write_inventory(c)
        c.status = "ready"
        c.save()
    except BaseException:
        held.close()
        destroy(c)
        raise
    return c


def _make_host(c: Cluster, h: ClusterHost) -> str:
    """Namespace, link, filesystem and sshd of one host; its known_hosts line."""
    hd = Path(c.root) / h.name
    hd.mkdir(exist_ok=True)
    _sh(["ip", "netns", "add", h.netns], "ip netns add")
    _sh(["ip", "link", "add", h.veth, "type", "veth", "peer", "name", f"{h.veth}p"],
        "ip link add (veth)")
    _sh(["ip", "link", "set", f"{h.veth}p", "netns", h.netns], "ip link set netns")
    _sh(["ip", "-n", h.netns, "link", "set", f"{h.veth}p", "name", "eth0"], "ip link rename")
    _sh(["ip", "link", "set", h.veth, "master", c.bridge], "ip link set master")
    _sh(["ip", "link", "set", h.veth, "up"], "ip link set up")
    _sh(["ip", "-n", h.netns, "addr", "add", f"{h.address}/24", "dev", "eth0"], "ip addr add")
    for dev in ("lo", "eth0"):
        _sh(["ip", "-n", h.netns, "link", "set", dev, "up"], "ip link set up")
    h.image = str(hd / "disk.img")
    with open(h.image, "wb") as fh:
        fh.truncate(c.size)
    c.save()
    h.loop = _attach(Path(h.image))
    c.save()
    _sh(["mkfs.ext4", "-q", "-F", "-m", "0", "-L", f"assay-{h.name}", h.loop], "mkfs.ext4")
    h.mountpoint = str(hd / "mnt")
    Path(h.mountpoint).mkdir(exist_ok=True)
    _sh(["mount", h.loop, h.mountpoint], "mount")
    c.save()
    hostkey = hd / "ssh_host_ed25519_key"
    _sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", h.name, "-f", str(hostkey)],
        "ssh-keygen (host key)")
    h.sshd_config, h.pidfile = str(hd / "sshd_config"), str(hd / "sshd.pid")
    Path(h.sshd_config).write_text(SSHD_CONFIG.format(
        address=h.address, hostkey=hostkey, pidfile=h.pidfile,
        authorized_keys=Path(c.root) / "authorized_keys"), encoding="utf-8")
    c.save()
    _sh(["nsenter", f"--net=/run/netns/{h.netns}", SSHD, "-f", h.sshd_config,
         "-E", str(hd / "sshd.log")], "sshd")
    pub = Path(f"{hostkey}.pub").read_text(encoding="utf-8").split()
    return f"{h.address} {pub[0]} {pub[1]}\n"


def _wait_listening(address: str, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((address, 22), timeout=1):
                return
        except OSError as e:
            if time.monotonic() > end:
                raise UserError(f"sshd on {address} does not answer: {e}") from None
            time.sleep(0.05)


def write_inventory(c: Cluster) -> None:
    lines = [f"# lab cluster {c.name}: made by `assay lab create cluster`", f"[{c.name}]"]
    lines += [f"{h.name} ansible_host={h.address} assay_path={h.path}" for h in c.hosts]
    lines += ["", f"[{c.name}:vars]", "ansible_user=root", "ansible_port=22",
              f"ansible_ssh_private_key_file={c.key}", f"assay_known_hosts={c.known_hosts}",
              f"assay_lab_cluster={c.root}", ""]
    Path(c.inventory).write_text("\n".join(lines), encoding="utf-8")


def summary(c: Cluster) -> dict[str, Any]:
    return {**asdict(c), "inventory": c.inventory, "known_hosts": c.known_hosts, "key": c.key}

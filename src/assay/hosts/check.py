"""Is every host of an inventory ready for a run? One thread per host (bounded).

Per host: SSH in batch mode with its host key verified; fio present, version >= 3.33; the
agent's Python (and its RBD binding, pythoncheck.py); bash 5 for a close start; its
clock against ours (midpoint of the fastest of a few round trips); free space at its target;
and the rules a local target obeys (a directory's parent exists; a block device holding a
filesystem, partition table or mount, or used by another device, is refused).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from assay.hosts.devicerules import device_problems, refusal
from assay.hosts.inventory import Host
from assay.hosts.pythoncheck import check_python
from assay.hosts.ssh import SshError, SshHost

FIO_MIN = (3, 33)
CLOCK_WARN = 0.1  # seconds: per-second series of two hosts would no longer line up
MAX_WORKERS = 16

# $1 = the target directory: the directory itself if it exists, else its parent, must be
# a directory; prints df's line for it
PROBE_PATH = (
    'p=$1; if [ -e "$p" ] && [ ! -d "$p" ]; then echo "notdir"; exit 3; fi; d=$p; '
    '[ -e "$d" ] || d=$(dirname -- "$p"); [ -d "$d" ] || { echo "noparent $d"; exit 3; }; '
    'df -P -k -- "$d" | tail -n 1'
)
# true where bash 5 runs: fio then starts at an instant from a bash waiter forked before it
# (runners/sshfio.py); `--norc`: a bash started by sshd reads ~/.bashrc otherwise (Debian's)
BASH_WAITS = 'command -v bash >/dev/null && bash --norc -c \'[ -n "$EPOCHREALTIME" ]\''
# $1 = the target device: its size, signatures, mount and holders
PROBE_DEVICE = (
    'r=$(readlink -f -- "$1"); [ -b "$r" ] || { echo "notblock"; exit 3; }; '
    'echo "SIZE=$(blockdev --getsize64 "$r")"; blkid -p -o export "$r" 2>/dev/null; '
    'awk -v a="$1" -v b="$r" \'$1==a||$1==b{print "MOUNTED=1"; exit}\' /proc/mounts; '
    'n=$(basename "$r"); [ -n "$(ls -A "/sys/class/block/$n/holders" 2>/dev/null)" ] '
    '&& echo "HOLDERS=1"; exit 0'
)


@dataclass
class HostCheck:
    host: Host
    reachable: bool = False
    fio: str | None = None
    python: str | None = None  # its Python version, as assay's agent runs it (pythoncheck.py)
    offset: float | None = None  # seconds, the host's clock minus ours
    rtt: float | None = None
    free: int | None = None  # bytes at the target (a device: its size)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def document(self) -> dict[str, Any]:
        return {"host": self.host.public(), "ok": self.ok, "reachable": self.reachable,
                "fio": self.fio, "python": self.python, "clock_offset_s": self.offset,
                "clock_rtt_s": self.rtt,
                "target": self.host.target, "free_bytes": self.free, "errors": self.errors,
                "warnings": self.warnings}


def fio_version(text: str) -> tuple[int, ...] | None:
    m = re.search(r"fio-(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_host(host: Host, *, accept_new: bool = False, known_hosts: str | None = None,
               connect_timeout: int = 5) -> HostCheck:
    r = HostCheck(host)
    if host.target is None:
        r.errors.append(f"{host.name}: no assay_path or assay_device: where should fio write? "
                        f"({host.source})")
    if host.address == host.name and not host.ssh_args:  # a bastion may resolve it there
        try:
            socket.getaddrinfo(host.name, host.port)
        except (OSError, UnicodeError):
            r.errors.append(f"{host.name}: no ansible_host, and the name does not resolve "
                            f"({host.source})")
            return r
    with SshHost(host, accept_new=accept_new, known_hosts=known_hosts,
                 connect_timeout=connect_timeout) as ssh:
        try:
            ssh.connect()
        except SshError as e:
            r.errors.append(str(e))
            return r
        r.reachable = True
        _check_fio(ssh, r)
        check_python(ssh, r)  # the agent's interpreter
        if ssh.run(["sh", "-c", BASH_WAITS], timeout=20).returncode != 0:
            r.warnings.append(f"{host.name}: no bash 5 there: fio starts at the instant after "
                              f"a POSIX shell's wait, a few ms less closely (Debian: apt-get "
                              f"install bash)")
        try:
            r.offset, r.rtt = ssh.clock_offset()
            if abs(r.offset) > CLOCK_WARN:
                r.warnings.append(f"{host.name}: clock {r.offset * 1000:+.0f} ms from this "
                                  f"machine's; keep hosts in sync (chrony, NTP)")
        except SshError as e:
            r.errors.append(str(e))
        if host.device:
            _check_device(ssh, host.device, r)
        elif host.path:
            _check_path(ssh, host.path, r)
    return r


def _check_fio(ssh: SshHost, r: HostCheck) -> None:
    out = ssh.run([str(ssh.host.vars.get("assay_fio") or "fio"), "--version"], timeout=20)
    if out.returncode != 0:
        r.errors.append(f"{ssh.name}: fio is not installed there (Debian: apt-get install fio)"
                        if out.returncode == 127 else
                        f"{ssh.name}: `fio --version` failed: {out.stderr.strip()[-200:]}")
        return
    r.fio = out.stdout.strip()
    v = fio_version(r.fio)
    if v is None or v < FIO_MIN:
        r.errors.append(f"{ssh.name}: {r.fio or 'fio'} is too old; assay needs fio "
                        f"{'.'.join(map(str, FIO_MIN))} or newer")


def _check_path(ssh: SshHost, path: str, r: HostCheck) -> None:
    out = ssh.run(["sh", "-c", PROBE_PATH, "assay-probe", path], timeout=20)
    words = out.stdout.split()
    if out.returncode == 3 and words[:1] == ["notdir"]:
        r.errors.append(f"{ssh.name}: target {path} exists and is not a directory")
    elif out.returncode == 3 and words[:1] == ["noparent"]:
        r.errors.append(f"{ssh.name}: target {path}: its parent {' '.join(words[1:])} does "
                        f"not exist there")
    elif out.returncode != 0 or len(words) < 4 or not words[3].isdigit():
        r.errors.append(f"{ssh.name}: cannot check target {path}: "
                        f"{(out.stderr or out.stdout).strip()[-200:]}")
    else:
        r.free = int(words[3]) * 1024


def _check_device(ssh: SshHost, device: str, r: HostCheck) -> None:
    out = ssh.run(["sh", "-c", PROBE_DEVICE, "assay-probe", device], timeout=20)
    if out.returncode == 3:
        r.errors.append(f"{ssh.name}: target device {device} is not a block device there")
        return
    if out.returncode != 0:
        r.errors.append(f"{ssh.name}: cannot check target device {device}: "
                        f"{out.stderr.strip()[-200:]}")
        return
    lines = out.stdout.splitlines()
    facts = dict(line.split("=", 1) for line in lines if "=" in line)
    if facts.get("SIZE", "").isdigit():
        r.free = int(facts["SIZE"])
    problems = device_problems(out.stdout, "MOUNTED" in facts, "HOLDERS" in facts)
    if problems:
        r.errors.append(f"{ssh.name}: {refusal(device, problems)}")


def check_all(hosts: Sequence[Host], *, accept_new: bool = False,
              known_hosts: str | None = None, connect_timeout: int = 5) \
        -> tuple[list[HostCheck], list[str]]:
    """Every host checked in parallel, in inventory order; and warnings across hosts."""
    with ThreadPoolExecutor(max_workers=max(1, min(MAX_WORKERS, len(hosts)))) as pool:
        results = list(pool.map(lambda h: check_host(h, accept_new=accept_new,
                                                     known_hosts=known_hosts,
                                                     connect_timeout=connect_timeout), hosts))
    warnings = []
    versions = {r.fio for r in results if r.fio}
    if len(versions) > 1:
        by = ", ".join(f"{r.host.name} {r.fio}" for r in results if r.fio)
        warnings.append(f"fio versions differ between hosts ({by}): results may not compare")
    return results, warnings

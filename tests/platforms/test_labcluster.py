"""`assay lab create cluster`: hosts in network namespaces with a real sshd each, their
inventory, cutting a host off and back, and a destroy that leaves nothing behind."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from assay.hosts import inventory
from assay.platforms import labcluster
from tests.conftest import assay_in_process
from tests.sshlab import needs_netns

pytestmark = needs_netns


def assay(*args: str, lab_dir: Path) -> subprocess.CompletedProcess[str]:
    # in this process (tests/conftest.py): lab verbs, never signalled, no start-up each
    return assay_in_process(*args, env={**os.environ, "ASSAY_LAB_DIR": str(lab_dir)})


def reachable(address: str, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((address, 22), timeout=timeout) as s:
            return s.recv(4).startswith(b"SSH-")
    except OSError:
        return False


def leftovers(lab_dir: Path, name: str, tag: str) -> list[str]:
    """Anything of the lab still on this machine."""
    found = [f"netns {n}" for n in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                   text=True).stdout.split()
             if n.startswith(f"assay-{name}-")]
    found += [f"loop {line}" for line in subprocess.run(["losetup", "-a"], capture_output=True,
                                                        text=True).stdout.splitlines()
              if str(lab_dir) in line]
    found += [f"mount {line}" for line in Path("/proc/mounts").read_text().splitlines()
              if str(lab_dir) in line]
    found += [f"process {p}" for p in subprocess.run(["pgrep", "-f", str(lab_dir)],
                                                     capture_output=True, text=True).stdout.split()]
    found += [f"link {line}" for line in subprocess.run(["ip", "-o", "link"], capture_output=True,
                                                        text=True).stdout.splitlines()
              if tag in line]
    if (lab_dir / name).exists():
        found.append(f"directory {lab_dir / name}")
    return found


def test_create_check_fail_recover_destroy(tmp_path: Path) -> None:
    lab_dir = tmp_path / "labs"
    name = f"c{os.getpid() % 10000}"
    t0 = time.monotonic()
    r = assay("lab", "create", "cluster", "--hosts", "2", "--name", name, lab_dir=lab_dir)
    created_in = time.monotonic() - t0
    try:
        assert r.returncode == 0, r.stderr
        c = labcluster.load(name, lab_dir)
        assert r.stdout.strip().splitlines()[-1] == c.inventory
        hosts = inventory.load(c.inventory)
        assert [(h.name, h.address, h.user, h.key_file, h.known_hosts) for h in hosts] == [
            (h.name, h.address, "root", c.key, c.known_hosts) for h in c.hosts]
        assert c.subnet.startswith("10.213.") and len(set(h.address for h in hosts)) == 2
        for h in c.hosts:  # its own filesystem, mounted where the host sees its target
            assert Path(h.path).parent == Path(h.mountpoint) and os.path.ismount(h.mountpoint)
            assert reachable(h.address)
        assert oct(Path(c.key).stat().st_mode & 0o777) == "0o600"
        listed = assay("lab", "list", lab_dir=lab_dir)
        assert name in listed.stdout and "n1 n2" in listed.stdout
        assert f'"inventory": "{c.inventory}"' in assay("lab", "list", "--json",
                                                        lab_dir=lab_dir).stdout
        assert created_in < 15

        labcluster.host_fail(c, "n1")  # cut off: nothing answers, the other host does
        assert not reachable(c.hosts[0].address) and reachable(c.hosts[1].address)
        labcluster.host_recover(c, "n1")
        end = time.monotonic() + 5
        while not reachable(c.hosts[0].address) and time.monotonic() < end:
            time.sleep(0.1)
        assert reachable(c.hosts[0].address)
        with pytest.raises(Exception, match="no host 'n9'"):
            labcluster.host_fail(c, "n9")
        again = assay("lab", "create", "cluster", "--name", name, lab_dir=lab_dir)
        assert again.returncode == 2 and "already exists" in again.stderr
        # the same name from another lab directory must not touch this one's namespaces
        other = assay("lab", "create", "cluster", "--name", name, lab_dir=tmp_path / "other")
        assert other.returncode == 2 and f"namespace assay-{name}-n1" in other.stderr
        assert reachable(c.hosts[1].address)
    finally:
        t0 = time.monotonic()
        gone = assay("lab", "destroy", name, lab_dir=lab_dir)
        destroyed_in = time.monotonic() - t0
    assert gone.returncode == 0, gone.stderr
    assert leftovers(lab_dir, name, c.bridge[:-2]) == []
    assert destroyed_in < 15
    assert not reachable(c.hosts[0].address, timeout=0.2)


def test_bad_requests_exit_2(tmp_path: Path) -> None:
    lab_dir = tmp_path / "labs"
    for args, says in ((["--hosts", "0"], "--hosts: 1 to 32"),
                       (["--name", "Bad Name"], "lower-case letters"),
                       (["--size", "1MiB"], "64MiB or more")):
        r = assay("lab", "create", "cluster", *args, lab_dir=lab_dir)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr
    r = assay("lab", "destroy", "nothing-here", lab_dir=lab_dir)
    assert r.returncode == 2 and "no lab" in r.stderr

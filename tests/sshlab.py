"""A real lab cluster for tests: hosts in network namespaces, each with its own sshd, made
once per test module and destroyed afterwards (also when a test fails).

Test modules use it with `from tests.sshlab import cluster  # noqa: F401`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.hosts import inventory
from assay.hosts.inventory import Host
from assay.platforms import labcluster
from assay.platforms.labcluster import Cluster


def _netns_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, loop devices, mounts)"
    probe = f"assay-probe-{uuid.uuid4().hex[:6]}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True,
                      check=False).returncode != 0:
        return "network namespaces are not available (`ip netns add` failed)"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return None


SKIP = _netns_unavailable()
needs_netns = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A 3-host lab cluster (n1, n2, n3)."""
    if SKIP:
        pytest.skip(SKIP)
    root = tmp_path_factory.mktemp("labs")
    c = labcluster.create(f"t{uuid.uuid4().hex[:6]}", 3, root=root)
    try:
        plain_shell(c)
        yield c
    finally:
        labcluster.destroy(c)


def hosts_of(c: Cluster) -> list[Host]:
    return inventory.load(c.inventory)


def plain_shell(c: Cluster) -> None:
    """Each lab host's sessions without this machine's interactive rc files, as on a fresh
    host: sshd runs a command in root's login shell, and bash started by sshd reads
    ~/.bashrc, here the test machine's own (root's `pyenv init`: 3 s a command on a loaded
    machine, most of a short lab run's wall time). `SetEnv SHLVL=1` makes that bash a
    nested one, which skips ~/.bashrc; the host's tools are the system's (/usr/bin/python3).
    Its sshd restarts with that line (the listener only: no session is open yet)."""
    for h in c.hosts:
        config = Path(h.sshd_config)
        text = config.read_text(encoding="utf-8")
        if "SetEnv SHLVL=1" not in text:
            config.write_text(text + "SetEnv SHLVL=1\n", encoding="utf-8")
        pid = int(Path(h.pidfile).read_text(encoding="utf-8"))
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < end:
            time.sleep(0.02)
        subprocess.run(["nsenter", f"--net=/run/netns/{h.netns}", labcluster.SSHD, "-f",
                        str(config), "-E", str(Path(h.sshd_config).parent / "sshd.log")],
                       check=True, capture_output=True)
        end = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection((h.address, 22), timeout=1):
                    break
            except OSError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)

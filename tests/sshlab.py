"""A real lab cluster for tests: hosts in network namespaces, each with its own sshd, made
once per test module and destroyed afterwards (also when a test fails).

Test modules use it with `from tests.sshlab import cluster  # noqa: F401`.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator

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
        yield c
    finally:
        labcluster.destroy(c)


def hosts_of(c: Cluster) -> list[Host]:
    return inventory.load(c.inventory)


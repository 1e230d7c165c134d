from __future__ import annotations

from assay.hosts import inventory
from assay.hosts.inventory import Host


def example_hosts(text: str) -> list[Host] | None:
    """A cluster-only scenario (it takes a host down, or runs fio on Ceph's hosts) plans with
    an example inventory."""
    return inventory.example() if "host_fail" in text or "platform: ceph" in text else None

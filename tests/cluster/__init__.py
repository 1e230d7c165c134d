from __future__ import annotations

from assay.hosts import inventory
from assay.hosts.inventory import Host


def example_hosts(text: str) -> list[Host] | None:
    """A cluster-only scenario (it takes a host down) plans with an example inventory."""
    return inventory.example() if "host_fail" in text else None

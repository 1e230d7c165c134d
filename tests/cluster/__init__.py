from __future__ import annotations

from assay.hosts import inventory
from assay.hosts.inventory import Host

EXAMPLE = "n1 assay_path=/mnt/assay\nn2 assay_path=/mnt/assay\nn3 assay_path=/mnt/assay\n"


def example_hosts(text: str) -> list[Host] | None:
    """A cluster-only scenario (it takes a host down) plans with an example inventory."""
    return inventory.parse(EXAMPLE, "example.ini") if "host_fail" in text else None

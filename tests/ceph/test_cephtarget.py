"""Ceph targets from outside a run: inventory variables, a crashed run's images."""

from __future__ import annotations

from pathlib import Path

from assay.hosts.inventory import Host
from assay.platforms.cephtarget import clean_crashed, from_inventory
from assay.scenario.models import Target


def test_inventory_variables_fill_only_a_ceph_target() -> None:
    hosts = [Host("n1", "10.0.0.1", vars={"assay_ceph_conf": "/etc/ceph/x.conf",
                                          "assay_ceph_pool": "vms"})]
    edit = from_inventory(hosts)
    assert edit is not None
    ceph = Target(platform="ceph", options={"pool": "mine"})
    edit(ceph)
    assert ceph.options == {"conf": "/etc/ceph/x.conf", "pool": "mine"}  # the scenario's wins
    other = Target(platform="btrfs", path="/mnt")
    edit(other)
    assert other.options == {}
    assert from_inventory([Host("n1", "10.0.0.1")]) is None and from_inventory(None) is None


def test_a_crashed_run_on_a_cluster_that_is_gone_is_forgotten(tmp_path: Path) -> None:
    facts = {"platform": "ceph", "conf": str(tmp_path / "gone.conf"), "pool": "assay",
             "created": ["assay/assay.x.n1.0"]}
    lines = clean_crashed(facts)
    assert facts["created"] == [] and "is gone" in lines[0]
    assert clean_crashed(facts) == []  # asked once
    assert clean_crashed({"platform": "btrfs", "created": ["x"]}) == []

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


def test_a_ceph_path_off_cephfs_is_refused_before_any_io(tmp_path: Path) -> None:
    from assay.exitcodes import UserError
    from assay.platforms.ceph import Driver

    d = Driver(Target(platform="ceph", path=str(tmp_path / "db")))
    try:
        d.prepare()
    except UserError as e:
        assert "not CephFS" in str(e)
    else:
        raise AssertionError("a path off CephFS was accepted")
    assert not (tmp_path / "db").exists()  # nothing made


def test_scrub_corrupt_and_repair_need_ceph_and_are_two_steps() -> None:
    import pytest
    from pydantic import ValidationError

    from assay.actions.scrub import Params, requires
    from assay.platforms.btrfs import Driver as Btrfs
    from assay.platforms.ceph import Driver

    assert requires(Params(corrupt=True)) == {"scrub.corrupt"}
    assert requires(Params(repair=True)) == {"scrub.repair"}
    assert requires(Params()) == {"scrub"}
    assert {"scrub.corrupt", "scrub.repair"} <= Driver.actions
    assert "scrub.corrupt" not in Btrfs.actions  # refused at plan time elsewhere
    with pytest.raises(ValidationError, match="corrupt or repair"):
        Params(corrupt=True, repair=True)

"""Job files on RBD: one image per workload instance, each job on its file's region."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.hosts import inventory
from assay.plan import plan_text
from assay.platforms import ceph, cephtarget, rbdjobs
from assay.scenario.yamlsource import ScenarioInvalid

INVENTORY = """\
[lab]
n1 ansible_host=10.0.0.1 assay_path=/x
n2 ansible_host=10.0.0.2 assay_path=/x

[lab:vars]
assay_ceph_conf=/etc/ceph/lab.conf
assay_ceph_pool=vms
assay_ceph_client=assay
"""
SCENARIO = """\
name: rbd-test
target: {platform: ceph}
workloads:
  db: {kind: oltp, data_iops: 100, log_iops: 10, data_files: 2, log_files: 1,
       dataset: 64MiB, count_per_host: 2}
timeline: {duration: 10s}
"""


def sections(text: str) -> list[tuple[str, dict[str, str]]]:
    """A job file's sections in order (instances repeat their job names)."""
    out: list[tuple[str, dict[str, str]]] = []
    for line in text.splitlines():
        if m := re.match(r"^\[(.+)\]$", line):
            out.append((m.group(1), {}))
        elif "=" in line and out:
            k, v = line.split("=", 1)
            out[-1][1][k] = v
    return out


def planned(tmp_path: Path, text: str = SCENARIO):
    inv = tmp_path / "inv.ini"
    inv.write_text(INVENTORY)
    hosts = inventory.load(inv)
    return plan_text(text, "t.yaml", tmp_path, target=cephtarget.from_inventory(hosts), hosts=hosts)


def test_each_instance_drives_its_own_image_with_files_end_to_end(tmp_path: Path) -> None:
    plan = planned(tmp_path)
    assert plan.scenario.target.options["conf"] == "/etc/ceph/lab.conf"  # from the inventory
    for host in ("n1", "n2"):
        (_, glob), *jobs = sections(plan.jobfiles[host]["run.fio"])
        assert glob["ioengine"] == "rbd" and glob["pool"] == "vms"
        assert glob["clientname"] == "assay" and "directory" not in glob
        regions: dict[str, set[tuple[int, int]]] = {}
        for _, job in jobs:
            assert "filename" not in job
            regions.setdefault(job["rbdname"], set()).add((int(job["offset"]),
                                                           int(job["size"])))
        # two instances on each host, each its own image, named after the host and instance
        assert set(regions) == {f"assay.rbd-test.{host}.0", f"assay.rbd-test.{host}.1"}
        for spans in regions.values():  # 2 data files + 1 log file, laid end to end
            ordered = sorted(spans)
            assert len(ordered) == 3 and ordered[0][0] == 0
            assert all(a[0] + a[1] == b[0] for a, b in zip(ordered, ordered[1:], strict=False))
        (_, pglob), *prefill = sections(plan.jobfiles[host]["prefill.fio"])
        assert pglob["ioengine"] == "rbd"
        assert {j["rbdname"] for _, j in prefill} == set(regions)


def test_image_sizes_cover_every_file_of_the_instance(tmp_path: Path) -> None:
    plan = planned(tmp_path)
    assert plan.cluster is not None
    files = plan.cluster.hosts["n1"].files
    sizes = rbdjobs.images(plan.name, files)
    assert set(sizes) == {"assay.rbd-test.n1.0", "assay.rbd-test.n1.1"}
    for image, size in sizes.items():
        inst = image.rsplit(".", 2)[-2] + "." + image.rsplit(".", 1)[-1]
        need = sum(s for f, s in files if f.startswith(inst + "/"))
        assert need <= size < need + rbdjobs.ALIGN and size % rbdjobs.ALIGN == 0


def test_a_cephfs_path_is_a_plain_directory(tmp_path: Path) -> None:
    plan = planned(tmp_path, SCENARIO.replace("{platform: ceph}",
                                              "{platform: ceph, path: /mnt/cephfs/assay}"))
    glob = sections(plan.jobfiles["n1"]["run.fio"])[0][1]
    assert glob["ioengine"] == "libaio" and glob["directory"] == "${ASSAY_TARGET}"


def test_a_platform_threshold_needs_a_known_metric(tmp_path: Path) -> None:
    bad = SCENARIO + "thresholds:\n  - platform.rebuild_speed < 5m\n"
    with pytest.raises(ScenarioInvalid, match="METRIC one of recovery_s"):
        planned(tmp_path, bad)
    good = SCENARIO + "thresholds:\n  platform.recovery_s: \"< 5m\"\n"
    assert planned(tmp_path, good).thresholds == []  # graded by the cluster, not per component


def test_rbd_runs_on_hosts_only() -> None:
    from assay.exitcodes import UserError
    from assay.scenario.models import Target

    with pytest.raises(UserError, match="--lab NAME"):
        ceph.Driver(Target(platform="ceph")).prepare()

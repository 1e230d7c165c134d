"""docs/platforms.md: every example scenario plans, RBD ones on the doc's own Proxmox
inventory (its `assay_ceph_*` variables fill the target), CephFS ones on this machine."""

import re
from pathlib import Path

import pytest

from assay.hosts import inventory
from assay.plan import plan_text
from assay.platforms import cephtarget

DOC = Path(__file__).parents[2] / "docs" / "platforms.md"
BLOCKS = [b for b in re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S) if "name:" in b]
INVENTORY = re.findall(r"```ini\n(.*?)```", DOC.read_text(), re.S)[0]


def test_the_doc_has_the_cephfs_and_scrub_error_examples() -> None:
    assert any("cephfs" in b for b in BLOCKS) and any("corrupt: true" in b for b in BLOCKS)


@pytest.mark.parametrize("text", BLOCKS)
def test_documented_ceph_scenarios_plan(text: str, tmp_path: Path) -> None:
    hosts = None
    if "path:" not in text:  # RBD: on the cluster the doc's inventory describes
        (tmp_path / "pve.ini").write_text(INVENTORY)
        hosts = inventory.load(tmp_path / "pve.ini")
    plan = plan_text(text, "platforms.md", tmp_path, target=cephtarget.from_inventory(hosts),
                     hosts=hosts)
    assert plan.components and plan.scenario.target.platform == "ceph"
    assert plan.scenario.timeline.steps
    if hosts:
        assert plan.scenario.target.options["pool"] == "assay"

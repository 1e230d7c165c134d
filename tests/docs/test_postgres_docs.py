"""docs/postgres.md: every example scenario plans, and every key its table names exists."""

import re
from pathlib import Path

import pytest

from assay.hosts import inventory
from assay.plan import plan_text
from assay.workloads.postgres import Params

DOC = Path(__file__).parents[2] / "docs" / "postgres.md"
BLOCKS = [b for b in re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S) if "name:" in b]


@pytest.mark.parametrize("text", BLOCKS)
def test_documented_postgres_scenarios_plan(text, tmp_path):
    hosts = None
    if "hosts:" in text:  # placed on a cluster: planned with a 3-host inventory
        inv = tmp_path / "inventory.ini"
        inv.write_text("".join(f"n{i} ansible_host=10.0.0.{i} assay_path=/srv/assay\n"
                               for i in (1, 2, 3)))
        hosts = inventory.load(inv)
    plan = plan_text(text, "postgres.md", hosts=hosts)
    assert any(c.name.endswith(".tx.commit") for c in plan.components) and plan.thresholds
    if hosts is not None:
        assert plan.cluster is not None
        assert [h for h, hp in plan.cluster.hosts.items() if "pg" in hp.instances] == \
            ["n1", "n2"]


def test_the_key_table_names_real_keys():
    table = DOC.read_text().split("## Keys")[1].split("##")[0]
    keys = {k for row in re.findall(r"^\| (`.*?`) \|", table, re.M)
            for k in re.findall(r"`(\w+)`", row)}
    assert keys and keys <= set(Params.model_fields)
    assert set(Params.model_fields) - {"kind", "data", "access", "load", "prefill", "host",
                                       "hosts", "count_per_host", "stagger", "verify",
                                       "start", "stop", "failover"} <= keys

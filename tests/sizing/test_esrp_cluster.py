"""`assay size exchange --emit-load cluster`: the scenario ESRP validates on a cluster, every
server's Jetstress load on its own host, one server lost, the survivors at their N-1 load.
On the lab: tests/cluster/test_lab_esrp.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import yaml
from click.testing import CliRunner

from assay.cli.size_exchange import command
from assay.exitcodes import UserError
from assay.hosts import inventory
from assay.plan.build import plan_text
from tests.conftest import assay_in_process

# seed 003: 60,000 mailboxes on 3 Jetstress servers, 8 databases each, 0.121 IOPS a mailbox
ATLANTIS = ["--mailboxes", "60000", "--messages", "150", "--mailbox-size", "800MB",
            "--servers", "3", "--copies", "2", "--databases-per-server", "8"]


def emit(tmp_path, *extra: str) -> str:
    out = tmp_path / "esrp.yaml"
    r = CliRunner().invoke(command, [*ATLANTIS, "--emit-load", "cluster", *extra,
                                     "--emit-scenario", str(out)])
    assert out.exists(), r.output
    return out.read_text()


def three_hosts(tmp_path):
    text = "".join(f"n{i} ansible_host=192.0.2.{i} assay_path={tmp_path / f'n{i}'}\n"
                   for i in (1, 2, 3))
    return inventory.parse(text, "inventory.ini")


def db_iops(specs) -> float:
    return sum(s.target_iops or 0 for s in specs if s.component in ("mail.db.read",
                                                                    "mail.db.write"))


def test_each_survivor_steps_up_from_2420_to_3630_iops(tmp_path):
    text = emit(tmp_path)
    doc = yaml.safe_load(text)
    mail = doc["workloads"]["mail"]
    assert mail["hosts"] == "all" and mail["count_per_host"] == 2
    assert mail["failover"] == {"after": 30.0} and mail["databases"] == 4
    assert doc["timeline"]["steps"] == [{"action": "host_fail", "at": 3600.0, "host": "-1"}]
    assert "from 2,420 to 3,630 IOPS (N-1)" in doc["description"]
    # Jetstress strict, before the loss and after it
    assert "mail.db.read.lat_avg <= 20ms before" in doc["thresholds"]
    assert "mail.db.iops >= target after host_fail" in doc["thresholds"]
    assert len(doc["thresholds"]) == 10
    plan = plan_text(text, "esrp.yaml", hosts=three_hosts(tmp_path))
    assert plan.cluster is not None
    for host in ("n1", "n2", "n3"):  # each server's normal Jetstress load on its host
        assert db_iops(plan.cluster.hosts[host].specs) == pytest.approx(2420)
    # n3 lost: one of its two parts to each survivor, each then at its N-1 load
    moves = plan.cluster.moves["n3"]
    assert sorted(m.to for m in moves) == ["n1", "n2"]
    part = db_iops(moves[0].instance.components)
    assert 2420 + part == pytest.approx(3630)


def test_scaled_for_a_lab_it_plans_with_its_own_rates_data_and_length(tmp_path):
    text = emit(tmp_path, "--emit-iops", "150", "--emit-dataset", "96MiB",
                "--emit-duration", "50s")
    doc = yaml.safe_load(text)
    mail = doc["workloads"]["mail"]
    assert mail["load"]["scale"] == pytest.approx(150 / 2420, rel=1e-6)
    assert mail["dataset"] == 48 << 20
    assert doc["timeline"]["duration"] == 50 and doc["timeline"]["steps"][0]["at"] == 25
    assert mail["failover"]["after"] == 5
    plan = plan_text(text, "esrp.yaml", hosts=three_hosts(tmp_path))
    assert db_iops(plan.cluster.hosts["n1"].specs) == pytest.approx(150)
    assert "from 150 to 225 IOPS (N-1)" in doc["description"]


@pytest.mark.parametrize(("args", "message"), [
    (["--emit-duration", "10s"], "--emit-duration must be at least 20s"),
    (["--emit-iops", "-5"], "--emit-iops must be positive"),
])
def test_impossible_cluster_scenarios_are_refused_exit_2(tmp_path, args, message):
    r = assay_in_process("size", "exchange", *ATLANTIS, "--emit-load", "cluster", *args,
                         "--emit-scenario", str(tmp_path / "x.yaml"))  # no start-up each
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_one_server_has_no_survivor():
    from assay.sizing.esrp import cluster_scenario

    with pytest.raises(UserError, match="needs --servers 2 or more"):
        cluster_scenario(SimpleNamespace(servers=1), None)  # type: ignore[arg-type]

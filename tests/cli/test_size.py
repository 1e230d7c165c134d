"""`assay size` end to end: JSON, --explain, errors, emitted scenarios, documented examples."""

import json
import math
import re
import shlex
import subprocess
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from assay.cli.size import command
from tests.conftest import assay_in_process

ROOT = Path(__file__).resolve().parents[2]
EXCHANGE = ["exchange", "--mailboxes", "10000", "--messages", "150", "--servers", "4",
            "--cores", "24", "--specint-per-core", "50", "--exchange-version", "2016"]
NODE = ["--node-cores", "32", "--node-ram", "512GiB", "--drives", "6", "--drive-size", "4TiB"]


def size(*args: str):
    return CliRunner().invoke(command, list(args), catch_exceptions=False)


def assay(*args: str) -> subprocess.CompletedProcess[str]:
    # in this process (tests/conftest.py): nothing here is signalled, no start-up per call
    return assay_in_process("size", *args)


def test_json_has_the_numbers():
    r = size(*EXCHANGE, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["kind"] == "exchange" and doc["passed"] is True
    assert doc["figures"]["iops_per_mailbox"]["value"] == 0.121
    assert doc["figures"]["active_per_server_worst"]["value"] == 3334
    assert doc["figures"]["ram_recommended"]["value"] == 128 << 30
    assert all({"value", "unit", "formula", "inputs", "source"} <= set(f)
               for f in doc["figures"].values())
    assert doc["demand"]["cores"] == 96


def test_explain_prints_formulas_inputs_and_sources():
    plain = size(*EXCHANGE)
    explained = size(*EXCHANGE, "--explain")
    assert "0.00067 x messages_per_day" not in plain.output
    assert "formula: round(0.00067 x messages_per_day x (1 + headroom), 3)" in explained.output
    assert "messages_per_day = 150" in explained.output
    assert "Ask the Perf Guy" in explained.output


def test_failing_rule_is_listed_first_and_exits_1():
    r = size(*EXCHANGE[:-2], "--exchange-version", "2016", "--cores", "32")
    assert r.exit_code == 1
    first = r.output.strip().splitlines()[0]
    assert "design rule(s) fail" in first
    assert "Exchange 2016 cores per server" in r.output.split("Design rules")[0]


@pytest.mark.parametrize("args, words", [
    (["exchange", "--mailboxes", "-5", "--servers", "4", "--specint-per-core", "50"],
     "mailboxes must be a positive number"),
    (["cluster", *NODE, "--cores", "10", "--rf", "4"], "--rf must be 2 or 3"),
    (["cluster", *NODE, "--cores", "10", "--node-ram", "lots"], "--node-ram"),
    (["vdi", "--desktops", "100", "--emit-scenario", "x.yaml"], "needs --nodes"),
    (["exchange", "--tier", "10:150", "--servers", "2", "--specint-per-core", "50"],
     "MAILBOXES:MESSAGES:MAILBOX_SIZE"),
])
def test_bad_input_is_one_line_exit_2_no_traceback(args, words):
    p = assay(*args)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]
    assert "Traceback" not in p.stderr


def test_cluster_from_workload_json(tmp_path):
    demand = tmp_path / "exchange.json"
    demand.write_text(size(*EXCHANGE, "--json").output)
    r = size("cluster", *NODE, "--workload", str(demand), "--json")
    doc = json.loads(r.output)
    assert doc["inputs"]["workloads"][0]["kind"] == "exchange"
    assert doc["figures"]["cvm_cores"]["value"] == 6  # Exchange only
    f = doc["figures"]
    exchange = json.loads(demand.read_text())["demand"]
    assert f["nodes_for_cpu"]["value"] == math.ceil(96 / (0.8 * 26))  # 5
    # every copy's storage x RF2 over 90 % of 24 TiB per node: 6 nodes, storage-bound
    assert f["nodes_for_storage"]["value"] == math.ceil(
        exchange["capacity_bytes"] * 2 / (0.9 * 24 * 2**40))
    assert f["nodes"]["value"] == max(f["nodes_for_cpu"]["value"], f["nodes_for_ram"]["value"],
                                      f["nodes_for_storage"]["value"]) + 1  # N+1
    assert doc["figures"]["cpu_after_failure"]["value"] <= 80


def test_cluster_bad_workload_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    p = assay("cluster", *NODE, "--workload", str(bad))
    assert p.returncode == 2 and "not JSON" in p.stderr


def test_data_reduction_shows_both_figures():
    doc = json.loads(size("cluster", *NODE, "--capacity", "100TiB", "--data-reduction", "2:1",
                          "--json").output)
    f = doc["figures"]
    assert f["recommended_effective"]["value"] == pytest.approx(2 * f["recommended"]["value"])
    assert f["nodes_needed_with_reduction"]["value"] < f["nodes"]["value"]


EXPECTED_KEYS = {"name", "description", "target", "workloads", "timeline", "thresholds"}


def test_exchange_scenario(tmp_path):
    out = tmp_path / "ex.yaml"
    r = size(*EXCHANGE, "--emit-scenario", str(out))
    assert r.exit_code == 0 and "scenario written" in r.output
    doc = yaml.safe_load(out.read_text())
    f = json.loads(size(*EXCHANGE, "--json").output)["figures"]
    assert set(doc) == EXPECTED_KEYS
    assert re.fullmatch(r"[A-Za-z0-9_-]+", doc["name"]) and doc["name"] == "exchange-n-1-validation"
    assert doc["target"] == {"platform": "local"}
    mail = doc["workloads"]["mail"]
    # N-1 by default: 3 survivors share the 10,000 active mailboxes
    assert mail["kind"] == "exchange" and mail["mailboxes"] == math.ceil(10_000 / 3)
    assert mail["mailboxes"] * mail["iops_per_mailbox"] == pytest.approx(
        f["jetstress_iops_worst"]["value"])
    assert mail["databases"] == f["jetstress_databases_worst"]["value"]
    assert mail["dataset"] == f["jetstress_dataset_worst"]["value"] == 3334 * 2 * 10**9
    assert mail["mailbox_size"] == 2 * 10**9  # the default quota, 2GB decimal
    assert doc["timeline"] == {"duration": "2h", "warmup": "5m"}
    assert doc["thresholds"] == {"mail": "jetstress-strict"}
    assert "scale it down" in out.read_text() and "passive copies add" in out.read_text()


def test_exchange_scenario_for_normal_operation_is_named_so(tmp_path):
    out = tmp_path / "normal.yaml"
    size(*EXCHANGE, "--emit-load", "normal", "--emit-scenario", str(out))
    doc = yaml.safe_load(out.read_text())
    assert doc["name"] == "exchange-normal-validation"
    assert "normal operation" in doc["description"]
    assert doc["workloads"]["mail"]["mailboxes"] == 2500


def test_oltp_and_vdi_scenarios(tmp_path):
    o, v = tmp_path / "o.yaml", tmp_path / "v.yaml"
    size("oltp", "--preset", "high", "--instances", "5", "--nodes", "3", "--emit-scenario",
         str(o))
    size("vdi", "--desktops", "1000", "--profile", "power", "--nodes", "5", "--failures", "2",
         "--emit-scenario", str(v))
    od, vd = yaml.safe_load(o.read_text()), yaml.safe_load(v.read_text())
    db = od["workloads"]["db"]
    assert db["kind"] == "oltp" and db["data_iops"] == 3 * 6000 and db["log_iops"] == 3 * 400
    assert od["thresholds"]["db.iops"] == ">= target"
    assert vd["name"] == "vdi-n-2-validation"
    assert vd["workloads"]["vdi"] == {"kind": "vdi", "profile": "power", "desktops": 334}
    assert set(vd["thresholds"]) == {"vdi.iops", "vdi.io.read.lat_p99", "vdi.io.write.lat_p99"}


def _plan_text():
    try:
        from assay.plan import plan_text
    except ImportError:  # the core planner is built in parallel
        return None
    return plan_text


@pytest.mark.parametrize("args", [
    EXCHANGE,
    ["exchange", "--mailboxes", "60000", "--mailbox-size", "800MB", "--servers", "3",
     "--databases-per-server", "8"],
    ["exchange", "--tier", "6000:150:2GiB", "--tier", "4000:300:4GiB:150KiB", "--servers", "4",
     "--specint-per-core", "50"],
    ["oltp", "--preset", "standard", "--instances", "6", "--nodes", "4"],
    ["oltp", "--data-iops", "3000", "--log-iops", "150", "--read-pct", "70", "--dataset",
     "50GiB", "--nodes", "2"],
    ["oltp", "--tpm", "60k", "--reads-per-txn", "2", "--writes-per-txn", "1", "--instances",
     "3", "--nodes", "3"],
    ["vdi", "--desktops", "1000", "--nodes", "8"],
])
def test_emitted_scenario_passes_the_core_planner(tmp_path, args):
    plan_text = _plan_text()
    if plan_text is None:
        pytest.skip("assay.plan.plan_text is not available")
    out = tmp_path / "s.yaml"
    size(*args, "--emit-scenario", str(out))
    plan = plan_text(out.read_text(), str(out))
    doc = json.loads(size(*args, "--json").output)
    target = sum(s.target_iops or 0 for s in plan.specs
                 if s.component.split(".")[1] in ("db", "data", "io"))
    f = doc["figures"]
    sized = f["jetstress_iops_worst"] if args[0] == "exchange" else f["iops_per_node_worst"]
    if args[0] == "oltp":  # the oltp target includes the log stream
        target += sum(s.target_iops or 0 for s in plan.specs if ".log." in s.component)
    assert target == pytest.approx(sized["value"], rel=1e-6)


def _documented_commands():
    text = (ROOT / "docs" / "sizing.md").read_text()
    commands = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            if line.startswith("$ assay size "):
                commands.append(line[len("$ assay size "):])
    return commands


def test_docs_have_examples():
    assert len(_documented_commands()) >= 6


@pytest.mark.parametrize("cmd", _documented_commands())
def test_documented_examples_run(cmd, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # examples that depend on an earlier one's output file
    for earlier in _documented_commands():
        if "--json > exchange.json" in earlier and "exchange.json" in cmd \
                and earlier != cmd:
            words = shlex.split(earlier.split(">")[0])
            (tmp_path / "exchange.json").write_text(size(*words).output)
    expect = 1 if "# exit 1" in cmd else 0
    cmd = cmd.split("#")[0]
    redirect = None
    if ">" in cmd:
        cmd, redirect = (part.strip() for part in cmd.split(">"))
    r = size(*shlex.split(cmd))
    assert r.exit_code == expect, r.output
    if redirect:
        assert json.loads(r.output)["kind"]
    if "--emit-scenario" in cmd:
        name = shlex.split(cmd)[shlex.split(cmd).index("--emit-scenario") + 1]
        assert set(yaml.safe_load((tmp_path / name).read_text())) == EXPECTED_KEYS


@pytest.mark.parametrize("sub", ["exchange", "oltp", "vdi", "cluster", "backup"])
def test_every_option_has_help(sub):
    cmd = command.commands[sub]
    missing = [p.name for p in cmd.params if isinstance(p, click.Option) and not p.help]
    assert missing == []
    help_text = size(sub, "--help").output
    assert "decimal" in help_text and "MiB" in help_text  # the units are stated


def test_group_help_states_decimal_units():
    r = size("--help")
    assert r.exit_code == 0 and "3.84TB = 3.84 x 10^12" in r.output


def test_drive_sizes_are_decimal():
    node = ["--node-cores", "32", "--node-ram", "512GiB", "--drives", "6", "--cores", "10"]
    tb = json.loads(size("cluster", *node, "--drive-size", "3.84TB", "--json").output)
    tib = json.loads(size("cluster", *node, "--drive-size", "3.84TiB", "--json").output)
    assert tb["inputs"]["node"]["drive_size"] == 3_840_000_000_000
    assert tib["inputs"]["node"]["drive_size"] == round(3.84 * 2**40)
    assert tb["figures"]["raw"]["value"] < tib["figures"]["raw"]["value"]


def test_mailbox_sizes_are_decimal():
    doc = json.loads(size("exchange", "--mailboxes", "20000", "--mailbox-size", "800MB",
                          "--servers", "1", "--copies", "1", "--json").output)
    assert doc["inputs"]["tiers"][0]["mailbox_size"] == 800_000_000
    assert doc["figures"]["jetstress_dataset_normal"]["value"] == 16 * 10**12


SUBCOMMANDS = [
    EXCHANGE + ["--iops", "1500"],
    ["exchange", "--mailboxes", "60000", "--mailbox-size", "800MB", "--servers", "3",
     "--databases-per-server", "8"],
    ["oltp", "--preset", "medium", "--instances", "7", "--nodes", "3"],
    ["oltp", "--tpm", "1.05M", "--data-iops", "6000", "--instances", "4", "--nodes", "4"],
    ["oltp", "--tps", "333.3", "--reads-per-txn", "3.3", "--writes-per-txn", "1.1",
     "--hit-ratio", "0.7"],
    ["vdi", "--desktops", "1234", "--profile", "power", "--nodes", "7"],
    ["cluster", *NODE, "--capacity", "33.3TB", "--cores", "77.7", "--rf", "3",
     "--max-full", "80"],
    ["backup", "--spindles", "7", "--dataset", "3.3TB", "--window", "7h"],
]


@pytest.mark.parametrize("args", SUBCOMMANDS, ids=lambda a: a[0])
def test_json_numbers_have_no_float_artifacts(args):
    r = size(*args, "--json")
    assert r.exit_code in (0, 1), r.output
    json.loads(r.output)
    numbers = re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?", r.output)
    assert numbers
    # at most 15 significant digits: no 4040.0000000000005 or 0.30000000000000004
    assert [n for n in numbers if len(n.split("e")[0].replace("-", "").replace(".", "")
                                      .strip("0")) > 15] == []


@pytest.mark.parametrize("args, words", [
    (["cluster", *NODE[:-2], "--drive-size", "4t", "--cores", "1"], "ambiguous"),
    (["exchange", "--mailboxes", "10", "--mailbox-size", "2g", "--servers", "2"], "2GB"),
    (["oltp", "--tps", "500"], "assay will not assume 0"),
    (["oltp", "--tps", "500", "--reads-per-txn", "3"], "--writes-per-txn"),
    (["oltp", "--tps", "5", "--tpm", "300", "--data-iops", "10"], "not both"),
    (["oltp", "--reads-per-txn", "3", "--writes-per-txn", "1"], "need a transaction rate"),
    (["backup", "--dataset", "1TB"], "what paces the backup"),
    (["exchange", "--servers", "3"], "--iops"),
    (["exchange", "--mailboxes", "10", "--servers", "2", "--databases", "2",
      "--databases-per-server", "1"], "not both"),
])
def test_more_bad_input_is_one_line_exit_2(args, words):
    p = assay(*args)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]


def test_exchange_inverse_sizes_for_the_mailboxes_the_iops_carry():
    doc = json.loads(size("exchange", "--iops", "1210", "--servers", "4", "--json").output)
    f = doc["figures"]
    assert doc["inputs"]["tiers"][0]["mailboxes"] == 10_000  # 1,210 / 0.121
    assert f["mailboxes_supported"]["value"] == 10_000
    assert f["measured_headroom"]["value"] == 0


def test_backup_scenario_plans(tmp_path):
    plan_text = _plan_text()
    out = tmp_path / "b.yaml"
    r = size("backup", "--spindles", "4", "--dataset", "2TB", "--targets", "16",
             "--emit-scenario", str(out))
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(out.read_text())
    assert doc["name"] == "backup-validation"
    assert doc["workloads"]["backup"]["targets"] == 16
    assert doc["thresholds"] == {"backup.source.read.mbps": ">= 100"}  # 4 x 25 MB/s
    if plan_text is not None:
        assert plan_text(out.read_text(), str(out)).components


def test_atlantis_acceptance_shows_normal_and_n_minus_1_side_by_side():
    """Issue 17's acceptance: 7,260 IOPS in total; 2,420 IOPS and 20,000 mailboxes per server
    in normal operation, about 16 TB of Jetstress data per server; N-1 beside them, with the
    rule cited."""
    r = size("exchange", "--mailboxes", "60000", "--messages", "150", "--mailbox-size",
             "800MB", "--servers", "3", "--copies", "2", "--explain")
    out = r.output
    view = out.split("Jetstress validation per server (ESRP)")[1]
    assert "7,260 IOPS" in out
    header = next(line for line in view.splitlines() if "normal operation" in line)
    assert "N-1: 1 server down" in header
    mailboxes = next(line for line in view.splitlines() if "Mailboxes tested" in line)
    assert "20,000 mailboxes" in mailboxes and "30,000 mailboxes" in mailboxes
    target = next(line for line in view.splitlines() if "Jetstress target IOPS" in line)
    assert "2,420 IOPS" in target and "3,630 IOPS" in target
    dataset = next(line for line in view.splitlines() if "Jetstress dataset" in line)
    assert "16.00 TB" in dataset and "24.00 TB" in dataset
    assert "rule:" in view and "worst failure" in " ".join(view.split())

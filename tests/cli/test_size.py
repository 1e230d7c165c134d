"""`assay size` end to end: JSON, --explain, errors, emitted scenarios, documented examples."""

import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from assay.cli.size import command

ROOT = Path(__file__).resolve().parents[2]
EXCHANGE = ["exchange", "--mailboxes", "10000", "--messages", "150", "--servers", "4",
            "--cores", "24", "--specint-per-core", "50", "--exchange-version", "2016"]
NODE = ["--node-cores", "32", "--node-ram", "512GiB", "--drives", "6", "--drive-size", "4TiB"]


def size(*args: str):
    return CliRunner().invoke(command, list(args), catch_exceptions=False)


def assay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", "size", *args], capture_output=True,
                          text=True, timeout=60)


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
    assert set(doc) == EXPECTED_KEYS
    assert re.fullmatch(r"[A-Za-z0-9_-]+", doc["name"]) and "n-1" in doc["name"]
    assert doc["target"] == {"platform": "local"}
    mail = doc["workloads"]["mail"]
    assert mail["kind"] == "exchange" and mail["mailboxes"] == 5000
    assert mail["mailboxes"] * mail["iops_per_mailbox"] == pytest.approx(605)
    assert mail["databases"] == 8
    assert doc["timeline"] == {"duration": "2h", "warmup": "5m"}
    assert doc["thresholds"] == {"mail": "jetstress-strict"}
    assert "scale it down" in out.read_text()


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
    ["exchange", "--tier", "6000:150:2GiB", "--tier", "4000:300:4GiB:150KiB", "--servers", "4",
     "--specint-per-core", "50"],
    ["oltp", "--preset", "standard", "--instances", "6", "--nodes", "4"],
    ["oltp", "--data-iops", "3000", "--log-iops", "150", "--read-pct", "70", "--dataset",
     "50GiB", "--nodes", "2"],
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
    sized = (f.get("iops_per_server") if args[0] == "exchange" else f["iops_per_node_worst"])
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


@pytest.mark.parametrize("sub", ["exchange", "oltp", "vdi", "cluster"])
def test_every_option_has_help(sub):
    cmd = command.commands[sub]
    missing = [p.name for p in cmd.params if isinstance(p, click.Option) and not p.help]
    assert missing == []
    assert size(sub, "--help").exit_code == 0

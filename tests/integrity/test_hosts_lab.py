"""Integrity mode on every host of a cluster run, end to end on the 3-host lab (sshd in
network namespaces, real fio, each host's own ext4): the agent writes and verifies each
host's blocks there, and a block damaged on one host is found and named with its host."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from assay.cli.common import find_run
from assay.hosts import inventory as inv
from assay.integrity.offline import verify_run
from assay.platforms.labcluster import Cluster
from assay.results.rundir import read_ndjson
from assay.runners.ssh import SshRunner
from tests.conftest import needs_fio
from tests.sshlab import cluster, needs_netns  # noqa: F401

# lab runs end to end: make test's second tier
pytestmark = [needs_netns, needs_fio, pytest.mark.tier2]

SCENARIO = """\
name: {name}
integrity: {{size: 8MiB, block: 8k, rate: {rate}}}
workloads:
  db: {{kind: oltp, data_iops: 200, read_pct: 70, data_files: 1, log_files: 1, log_iops: 20,
       dataset: 8MiB}}
timeline:
  warmup: 0s
  duration: 14s
  steps:
    - {{name: check, action: verify, at: 9s}}
thresholds:
  integrity.lost: "== 0"
  integrity.stale: "== 0"
  integrity.corrupt: "== 0"
"""
BLOCKS = (8 << 20) // 8192
FLIP = ("import sys\nf = open(sys.argv[1], 'r+b')\nfor o in map(int, sys.argv[2:]):\n"
        "    f.seek(o); b = f.read(4); f.seek(o); f.write(bytes(x ^ 0xFF for x in b))\n"
        "f.close()\n")  # on a host: 4 bytes inverted at each offset


def assay(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_every_host_writes_and_verifies_its_blocks_and_loses_none(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO.format(name="lab-integrity", rate=100))
    plan = assay("plan", str(scenario), "--hosts", cluster.inventory)
    assert plan.returncode == 0, plan.stderr
    assert "written and verified there by assay's agent" in " ".join(plan.stdout.split())
    r = assay("run", str(scenario), "--hosts", cluster.inventory, "--results",
              str(tmp_path / "results"), "--json")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    section = rec["integrity"]
    assert rec["status"] == "passed" and section["status"] == "verified"
    assert [p["label"] for p in section["passes"]] == ["check#1", "final"]
    for p in section["passes"]:  # every host verified every block of its own, each pass
        assert p["status"] == "completed" and set(p["hosts"]) == {"n1", "n2", "n3"}
        assert p["checked"] == p["blocks"] == 3 * BLOCKS and p["ok"] == 3 * BLOCKS
        assert all(h["checked"] == BLOCKS and h["lost"] == h["corrupt"] == h["stale"] == 0
                   for h in p["hosts"].values())
    for h in ("n1", "n2", "n3"):  # each host's writer wrote at its rate, with no error
        [f] = [f for f in section["files"] if f["host"] == h]
        assert f["acknowledged"] >= 500 and f["write_errors"] == 0 and f["journal_back"]
        assert f["path"].endswith(f"/assay-integrity/{h}.db.blk")
        assert section["hosts"][h]["status"] == "completed"
        assert (run_dir / "integrity" / h / "db.gen").stat().st_size == 4 * BLOCKS
    # the per-second rows came back from each host while it wrote
    rows = list(read_ndjson(run_dir / "integrity" / "n2.ndjson"))
    counted = [x["acknowledged"]["db"] for x in rows if "acknowledged" in x]
    assert len(counted) >= 10 and counted == sorted(counted)
    # the verify step is an event with the hosts' counts
    [step] = [e for e in read_ndjson(run_dir / "events.ndjson")
              if e.get("kind") == "step" and e.get("action") == "verify"]
    assert step["outcome"] == "ok", step
    assert f"{3 * BLOCKS} of {3 * BLOCKS}" in json.dumps(step), step
    shown = assay("show", str(run_dir))
    assert f"n1: {BLOCKS:,} of {BLOCKS:,} blocks" in shown.stdout, shown.stdout
    assert "final" in shown.stdout
    later = assay("verify", str(run_dir))  # its blocks are on its hosts: they must be named
    assert later.returncode == 2 and "give --hosts INVENTORY" in later.stderr
    later = assay("verify", str(run_dir), "--hosts", cluster.inventory, "--json")
    assert later.returncode == 0, later.stdout[-3000:] + later.stderr[-3000:]
    doc = json.loads(later.stdout)
    assert doc["status"] == "passed" and doc["pass"]["checked"] == 3 * BLOCKS
    assert {h: r["checked"] for h, r in doc["pass"]["hosts"].items()} == \
        {"n1": BLOCKS, "n2": BLOCKS, "n3": BLOCKS}
    # the bar adds what each host's agent says it has read, over SSH, up to all of it
    shown: list[tuple[int, int]] = []
    path, record = find_run(str(run_dir), None)
    doc = verify_run(path, record, threading.Event(), lambda *seen: shown.append(seen),
                     hosts=inv.load(cluster.inventory))
    assert doc["status"] == "passed" and shown[-1] == (3 * BLOCKS * 8192, 3 * BLOCKS * 8192)
    # a block damaged on n3 since the run: found there, by n3's agent
    n3 = {h.name: h for h in inv.load(cluster.inventory)}["n3"]
    with SshRunner(n3, tmp_path / "flip") as host:
        done = host.run(["python3", "-c", FLIP, f"{n3.path}/assay-integrity/n3.db.blk",
                         str(8192 * 42 + 10)])
    assert done.returncode == 0, done.stderr
    later = assay("verify", str(run_dir), "--hosts", cluster.inventory)
    assert later.returncode == 1, later.stdout[-3000:] + later.stderr[-3000:]
    said = " ".join(later.stdout.split())
    assert "FAILED" in said and f"corrupt: 1 first at db@n3:{8192 * 42}" in said, said
    assert "n3: completed" in said and json.loads(
        (run_dir / "verify.json").read_text())["status"] == "failed"


def test_a_block_damaged_on_one_host_is_found_and_named_with_that_host(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO.format(name="lab-integrity-flip", rate=1))  # few rewrites
    results = tmp_path / "results"
    run = subprocess.Popen([sys.executable, "-m", "assay", "run", str(scenario), "--hosts",
                            cluster.inventory, "--results", str(results), "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    n2 = {h.name: h for h in inv.load(cluster.inventory)}["n2"]
    target = f"{n2.path}/assay-integrity/n2.db.blk"
    offsets = [8192 * b + 100 for b in (5, 77, 901)]
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the load has started: the blocks are written
            events = [e for p in results.glob("*/events.ndjson") for e in read_ndjson(p)]
            if any(e.get("kind") == "load" and e.get("outcome") == "started" for e in events):
                break
            if run.poll() is not None:
                out, err = run.communicate()
                raise AssertionError(f"the run ended before its load: {out[-2000:]}{err[-2000:]}")
            time.sleep(0.2)
        else:
            raise AssertionError("the run never started its load")
        with SshRunner(n2, tmp_path / "flip") as host:  # on n2 itself, over its own sshd
            done = host.run(["python3", "-c", FLIP, target, *map(str, offsets)])
        assert done.returncode == 0, done.stderr
        out, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 1, out[-3000:] + err[-3000:]
    run_dir = Path(json.loads(out)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    section = rec["integrity"]
    assert rec["status"] == "failed" and section["corrupt"] == 3
    assert section["hosts"]["n2"]["corrupt"] == 3
    assert section["hosts"]["n1"]["corrupt"] == section["hosts"]["n3"]["corrupt"] == 0
    final = section["passes"][-1]
    assert final["workloads"]["db"]["offsets"]["corrupt"] == [f"n2:{8192 * b}"
                                                              for b in (5, 77, 901)]
    [t] = [t for t in rec["thresholds"] if t["expr"].startswith("integrity.corrupt")]
    assert not t["passed"] and "n2:40960" in t["note"]
    shown = assay("show", str(run_dir))
    assert "3 corrupt" in shown.stdout and "n2:40960" in shown.stdout, shown.stdout


def test_hosts_check_finds_the_agents_python_and_its_rbd_binding(
        cluster: Cluster) -> None:  # noqa: F811
    from dataclasses import replace

    from assay.hosts.check import check_host

    host = inv.load(cluster.inventory)[0]
    plain = check_host(host, known_hosts=cluster.known_hosts)
    assert plain.ok, plain.errors
    debian = replace(host, vars={**host.vars, "ansible_python_interpreter": "/usr/bin/python3"})
    good = check_host(debian, known_hosts=cluster.known_hosts)  # with Debian's python3-rbd
    assert good.ok and not [w for w in good.warnings if "RBD" in w], good.warnings
    missing = replace(host, vars={**host.vars,
                                  "ansible_python_interpreter": "/nonexistent/python3"})
    bad = check_host(missing, known_hosts=cluster.known_hosts)
    assert any("/nonexistent/python3 does not run there" in e for e in bad.errors), bad.errors


def test_a_host_lost_mid_run_is_not_verified_and_the_run_does_not_pass(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    from assay.platforms import labcluster

    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO.format(name="lab-integrity-loss", rate=50).replace(
        "    - {name: check, action: verify, at: 9s}",
        "    - {name: cut, action: host_fail, at: 5s, host: n3}"))
    try:
        r = assay("run", str(scenario), "--hosts", cluster.inventory, "--results",
                  str(tmp_path / "results"), "--json")
    finally:
        labcluster.host_recover(cluster, "n3")
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    section = rec["integrity"]
    assert list(rec["cluster"]["lost"]) == ["n3"]
    final = section["passes"][-1]
    assert final["status"] == "incomplete" and "n3: the host was lost" in final["reason"]
    assert final["hosts"]["n1"]["status"] == final["hosts"]["n2"]["status"] == "completed"
    assert final["checked"] == 2 * BLOCKS and final["lost"] == 0  # the survivors' blocks
    assert section["status"] == "not verified"
    assert section["hosts"]["n3"]["status"] == "not verified"
    assert section["hosts"]["n3"]["acknowledged"] > 0  # its writes up to the loss, counted
    [t] = [t for t in rec["thresholds"] if t["expr"].startswith("integrity.lost")]
    assert not t["passed"] and t["note"] == "no complete verify pass ran"
    shown = assay("show", str(run_dir))
    assert "n3: not verified" in shown.stdout, shown.stdout

"""Cluster runs end to end on a real 3-host lab (sshd in network namespaces, real fio, loop
ext4 per host), through the command line as a user runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.platforms import labcluster
from assay.platforms.labcluster import Cluster
from assay.report.cluster import host_series_rows
from assay.results.blocklog import read_rows
from assay.results.rundir import read_ndjson
from tests.conftest import needs_fio
from tests.sshlab import cluster, needs_netns  # noqa: F401

# lab runs end to end: make test's second tier
pytestmark = [needs_netns, needs_fio, pytest.mark.tier2]

OLTP = """\
name: {name}
workloads:
  db: {{kind: oltp, data_iops: 300, read_pct: 70, data_files: 1, log_files: 1, log_iops: 50,
       dataset: 8MiB}}
timeline:
  warmup: {warmup}
  duration: {duration}
{steps}
thresholds:
{thresholds}
  each_host.db.data.read.lat_p99: "< 200ms"
  start_skew: "< 100ms"
"""
N_MINUS_1 = ('  db.data.read.iops: ">= 95% target before"\n'
             '  cluster.db.data.read.iops: ">= 63% target after host_fail"')
RATE = '  db.data.read.iops: ">= 90% target"'


def assay(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True,
                          text=True, timeout=timeout)


def inventory(c: Cluster, tmp_path: Path, **changes: str) -> Path:
    """The lab's inventory, with some hosts' lines replaced (`n2="n2 ansible_host=..."`)."""
    lines = Path(c.inventory).read_text().splitlines()
    out = [changes.get(line.split()[0], line) if line[:1] == "n" else line for line in lines]
    path = tmp_path / "inventory.ini"
    path.write_text("\n".join(out) + "\n")
    return path


def fio_of_run(run_id: str) -> list[int]:
    """fio processes working in this run's remote directories, on any lab host."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "fio" and \
                    f"assay-{run_id}." in os.readlink(f"/proc/{pid}/cwd"):
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_a_host_fails_mid_run_and_the_survivors_sharing_a_directory_are_graded(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    n1, n2, n3 = cluster.hosts
    # n2 shares n1's target directory: their files must not collide
    inv = inventory(cluster, tmp_path,
                    n2=f"n2 ansible_host={n2.address} assay_path={n1.path}")
    scenario = tmp_path / "nf.yaml"
    scenario.write_text(OLTP.format(
        name="lab-node-failure", warmup="0s", duration="20s",
        steps="  steps:\n    - {action: host_fail, at: 8s, host: n3}",
        thresholds=N_MINUS_1 + '\n  host.n2.cpu_pct: "<= 100%"\n  host.mem_used_pct: "< 100%"'))
    try:
        r = assay("run", str(scenario), "--hosts", str(inv), "--results",
                  str(tmp_path / "results"), "--json")
    finally:
        labcluster.host_recover(cluster, "n3")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    c = rec["cluster"]
    assert rec["status"] == "passed"
    # host_fail at 8 s is a step; the loss is detected within 3 s and is an event too
    events = list(read_ndjson(run_dir / "events.ndjson"))
    [fail] = [e for e in events if e["kind"] == "step" and e["action"] == "host_fail"]
    [lost] = [e for e in events if e["kind"] == "host_lost"]
    assert 7.5 <= fail["t_start"] <= 9.5 and lost["host"] == "n3"
    assert lost["time"] - fail["time"] <= 3.0, lost["time"] - fail["time"]
    assert list(c["lost"]) == ["n3"] and lost["hosts_active"] == 2
    # the others went on to the end; n3's data up to the loss is kept
    active = list(read_ndjson(run_dir / "cluster.ndjson"))
    assert active[-1]["hosts_active"] == 2 and active[-1]["t"] >= 19.5
    series = [{"host": h, **r} for h, r in host_series_rows(run_dir)]
    last = {h: max(r["t"] for r in series if r["host"] == h) for h in ("n1", "n2", "n3")}
    assert last["n1"] >= 19.5 and last["n2"] >= 19.5 and 6 <= last["n3"] <= 10
    for h in ("n1", "n2"):  # 1 Hz from every host, no gap
        ts = sorted({r["t"] for r in series if r["host"] == h})
        assert max(b - a for a, b in zip(ts, ts[1:], strict=False)) < 1.5, (h, ts)
    merged_t = [r["t"] for r in active]
    assert max(b - a for a, b in zip(merged_t, merged_t[1:], strict=False)) < 1.5
    graded = c["graded"]
    assert all(graded[h]["ios"] > 0 for h in ("n1", "n2", "n3"))
    # merged = the hosts' IOs (the merged and each host's axes may cut a second apart)
    merged = sum(r["ios"] for r in read_rows(run_dir, "samples"))
    per_host = sum(r["ios"] for h in ("n1", "n2", "n3")
                   for r in read_rows(run_dir / "hosts" / h, "samples"))
    assert merged == per_host
    # each host's utilisation each second, from its agent, beside the controller's (local);
    # n3's rows end at its loss; graded per host
    util = list(read_rows(run_dir, "hosts"))
    seen = {h: sorted(r["t"] for r in util if r["host"] == h)
            for h in ("local", "n1", "n2", "n3")}
    assert all(len(seen[h]) >= 17 and seen[h][-1] >= 18.5 for h in ("local", "n1", "n2")), seen
    assert len(seen["n3"]) >= 4 and seen["n3"][-1] <= 11.5, seen["n3"]
    assert all(0 <= r["cpu_pct"] <= 100 for r in util)
    assert rec["utilisation"] == {"hosts": ["n1", "n2", "n3"], "errors": {}}
    graded_hosts = {t["component"] for t in rec["thresholds"] if t["metric"] == "mem_used_pct"}
    assert graded_hosts == {"host.local", "host.n1", "host.n2", "host.n3"}
    [cpu] = [t for t in rec["thresholds"] if t["metric"] == "cpu_pct"]
    assert cpu["component"] == "host.n2" and cpu["passed"] and cpu["observed"] > 0
    # the N-1 threshold graded the survivors after the failure
    [after] = [t for t in rec["thresholds"] if t["expr"].endswith("after host_fail")]
    assert after["passed"] and after["observed"] > 0
    # skew measured on every host, for each phase, and graded
    assert set(c["skew_ms"]["run"]) == {"n1", "n2", "n3"}
    assert c["thresholds"][0]["metric"] == "start_skew" and c["thresholds"][0]["passed"]
    # n1 and n2 wrote into one directory without touching each other's files
    names = {p.name for p in Path(n1.path).iterdir()}
    assert {"n1.0", "n2.0"} <= names
    assert (Path(n1.path) / "n2.0" / "db.data.1.dat").stat().st_size > 0
    # per-host environment fingerprints; no secret in what was written
    assert all(c["hosts"][h]["fio"].startswith("fio-3.") for h in ("n1", "n2", "n3"))
    assert all(c["hosts"][h]["kernel"] for h in ("n1", "n2", "n3"))
    assert not any("PRIVATE KEY" in p.read_text(errors="replace")
                   for p in run_dir.rglob("*") if p.is_file())
    # the summary shows the cluster line and the host lines
    shown = assay("show", str(run_dir))
    assert "Cluster: 3 hosts, 2 active at the end" in shown.stdout
    assert "host lost: n3" in shown.stdout and "lost at" in shown.stdout
    hosts_table = shown.stdout.split("Host utilisation")[-1]
    assert "local (controller)" in hosts_table and all(
        f"\n n{i} " in hosts_table or f"\nn{i} " in hosts_table for i in (1, 2, 3)), hosts_table


def test_kill_9_of_assay_leaves_no_fio_on_any_host(cluster: Cluster,  # noqa: F811
                                                   tmp_path: Path) -> None:
    scenario = tmp_path / "long.yaml"
    scenario.write_text(OLTP.format(name="lab-killed", warmup="0s", duration="60s", steps="",
                                    thresholds=RATE))
    results = tmp_path / "results"
    proc = subprocess.Popen([sys.executable, "-m", "assay", "run", str(scenario), "--hosts",
                             cluster.inventory, "--results", str(results)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run_id, deadline = "", time.monotonic() + 60
    while time.monotonic() < deadline:  # until the load runs on every host
        runs = list(results.glob("*/series.ndjson"))
        if runs and runs[0].stat().st_size:
            run_id = runs[0].parent.name
            if len(fio_of_run(run_id)) >= 3 * 6:  # fio + 5 job processes per host
                break
        time.sleep(0.2)
    assert run_id and len(fio_of_run(run_id)) >= 18, "the load never ran on every host"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = time.monotonic()
    while fio_of_run(run_id) and time.monotonic() < killed + 10:
        time.sleep(0.1)
    assert not fio_of_run(run_id), fio_of_run(run_id)


def test_a_mismatched_host_key_and_an_unwritable_target_are_refused_naming_each_host(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    n1, n2, n3 = cluster.hosts
    known = Path(cluster.known_hosts).read_text().splitlines()
    known[1] = known[0].replace(n1.address, n2.address)  # n2 "presents" n1's key
    bad = tmp_path / "known_hosts"
    bad.write_text("\n".join(known) + "\n")
    inv = inventory(cluster, tmp_path, n3=f"n3 ansible_host={n3.address} "
                                          f"assay_path=/proc/assay-{tmp_path.name}")
    inv.write_text(inv.read_text().replace(cluster.known_hosts, str(bad)))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(OLTP.format(name="lab-refused", warmup="0s", duration="3s", steps="",
                                    thresholds=RATE))
    r = assay("run", str(scenario), "--hosts", str(inv), "--results", str(tmp_path / "res"))
    assert r.returncode == 2, r.stdout + r.stderr
    err = " ".join(r.stderr.split())
    assert "2 hosts are not ready" in err
    assert "n2" in err and "does not match" in err and "refused" in err
    assert f"n3: cannot write to the target /proc/assay-{tmp_path.name} there" in err
    assert "Traceback" not in r.stdout + r.stderr
    assert not list((tmp_path / "res").glob("*/run.json"))  # nothing ran, nothing kept


def test_a_host_whose_fio_does_no_io_fails_the_run_by_name(cluster: Cluster,  # noqa: F811
                                                           tmp_path: Path) -> None:
    # n3's fio starts its jobs an hour late: it reports every second and does no IO
    wrapper = tmp_path / "lazy-fio"
    wrapper.write_text("#!/bin/sh\n"
                       "[ -f run.fio ] && sed -i 's/^\\[global\\]$/[global]\\nstartdelay=3600/' "
                       "run.fio\nexec fio \"$@\"\n")
    wrapper.chmod(0o755)
    n3 = cluster.hosts[2]
    inv = inventory(cluster, tmp_path, n3=f"n3 ansible_host={n3.address} assay_path={n3.path} "
                                          f"assay_fio={wrapper}")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(OLTP.format(name="lab-no-io", warmup="0s", duration="2s", steps="",
                                    thresholds=RATE))
    r = assay("run", str(scenario), "--hosts", str(inv), "--results", str(tmp_path / "res"),
              "--json")
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    graded = rec["cluster"]["graded"]
    assert graded["n1"]["passed"] and graded["n2"]["passed"]
    assert graded["n3"]["ios"] == 0 and not graded["n3"]["passed"]
    assert any("n3 did no IO" in t["note"] for t in graded["n3"]["thresholds"])
    assert "n3" in r.stderr and "did no IO" in r.stderr


def test_staggered_instances_run_and_are_graded_from_their_own_start(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    # n2 and n3, two instances each, 2 s apart: they start at 0, 2 | 4, 6 s, each for 9 s
    # (long enough that an instance's first partial second weighs little on a loaded machine)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(OLTP.format(name="lab-stagger", warmup="1s", duration="8s", steps="",
                                    thresholds=RATE + "\n  each_host.db.data.read.iops: "
                                    '">= 90% target"').replace(
        "dataset: 8MiB}", 'dataset: 8MiB, hosts: "1:", count_per_host: 2, stagger: 2s}'))
    r = assay("run", str(scenario), "--hosts", str(cluster.inventory), "--results",
              str(tmp_path / "res"), "--json")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    assert not rec["cluster"]["lost"]
    assert all(t["passed"] for t in rec["thresholds"]), rec["thresholds"]
    assert not [w for w in rec.get("warnings", []) if "behind" in w], rec["warnings"]
    start, end = rec["measured_window_s"]
    assert start == 1.0 and abs(end - 15.0) < 0.5  # to the last instance's end
    assert rec["cluster"]["placement"]["n3"]["windows"] == {"db": [[4, 13], [6, 15]]}
    assert all(g["passed"] for g in rec["cluster"]["graded"].values())

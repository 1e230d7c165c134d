"""A postgres workload placed on 2 of the 3 hosts of a real lab cluster (sshd in network
namespaces, Debian's PostgreSQL on each host, real fio beside it), through the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.platforms import labcluster
from assay.platforms.labcluster import Cluster, ClusterHost
from assay.report.cluster import host_rows, host_series_rows
from assay.results.rundir import read_ndjson, read_record
from tests.conftest import needs_fio
from tests.postgres.conftest import needs_postgres
from tests.sshlab import SKIP, needs_netns

# lab runs end to end: make test's second tier
pytestmark = [needs_netns, needs_fio, needs_postgres, pytest.mark.tier2]

RATE = 40  # transactions/s on each host
SCENARIO = f"""\
name: pg-on-hosts
workloads:
  io: {{kind: oltp, data_iops: 100, read_pct: 70, data_files: 1, log_files: 1, log_iops: 20,
       dataset: 8MiB}}
  pg: {{kind: postgres, hosts: ":2", scale: 1, clients: 4, threads: 2, rate: {RATE}}}
timeline: {{warmup: 3s, duration: 15s}}
thresholds:
  pg.tps: ">= 85% target"
  pg.lat_p99: "< 5s"
  pg.failed: "== 0"
  each_host.pg.tps: ">= 85% target"
  each_host.pg.lat_p99: "< 5s"
"""


def assay(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True,
                          text=True, timeout=timeout)


def postgres_under(hosts: Sequence[ClusterHost]) -> list[int]:
    """Server processes whose data directory is under one of the hosts' paths, and the hosts'
    pgbench (it works in `pg-pg/` of the run's remote directory, in the host's network
    namespace: another lab's, or a local run's beside this one, is not this lab's)."""
    paths = [h.path for h in hosts]
    nets = {os.stat(f"/run/netns/{h.netns}").st_ino for h in hosts}
    found = []
    for pid in os.listdir("/proc"):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            cwd = os.readlink(f"/proc/{pid}/cwd")
            net = os.stat(f"/proc/{pid}/ns/net").st_ino
        except OSError:
            continue
        if (comm == "postgres" and any(cwd.startswith(p) for p in paths)) or \
                (comm == "pgbench" and cwd.endswith("/pg-pg") and net in nets):
            found.append(int(pid))
    return found


def run_on(cluster: Cluster, tmp_path: Path, text: str, codes: tuple[int, ...] = (0,)) \
        -> tuple[Path, dict[str, Any]]:
    """`assay run` of scenario `text` on the lab's hosts: its run directory and run.json."""
    scenario = tmp_path / "pg.yaml"
    scenario.write_text(text)
    r = assay("run", str(scenario), "--hosts", cluster.inventory, "--results",
              str(tmp_path / "results"), "--json")
    assert r.returncode in codes, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    return run_dir, json.loads((run_dir / "run.json").read_text())


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A 3-host lab whose targets the hosts' PostgreSQL user reaches, as on real hosts:
    outside pytest's private (0700) temporary directory, which pytest keeps private."""
    if SKIP:
        pytest.skip(SKIP)
    root = Path(tempfile.mkdtemp(prefix="assay-pglab-"))
    root.chmod(0o711)
    c = labcluster.create(f"p{uuid.uuid4().hex[:6]}", 3, root=root)
    try:
        yield c
    finally:
        labcluster.destroy(c)
        shutil.rmtree(root, ignore_errors=True)


def test_hosts_without_postgresql_or_with_a_database_not_assays_are_refused_before_any_io(
        cluster: Cluster, tmp_path: Path) -> None:
    scenario = tmp_path / "pg.yaml"
    scenario.write_text(SCENARIO.replace(f"rate: {RATE}}}", f"rate: {RATE}, subdir: pgdata}}"))
    lines = Path(cluster.inventory).read_text().splitlines()
    inv = tmp_path / "inventory.ini"
    inv.write_text("\n".join(line + " assay_pg_bindir=/nonexistent/bin"
                             if line.startswith("n2 ") else line for line in lines) + "\n")
    foreign = Path(cluster.hosts[0].path) / "pgdata" / "pg-pg.run"  # someone else's, on n1
    foreign.mkdir(parents=True)
    (foreign / "precious").write_text("not assay's")
    try:
        r = assay("run", str(scenario), "--hosts", str(inv), "--results", str(tmp_path / "r"))
        checked = assay("hosts", "check", "--hosts", str(inv), "--scenario", str(scenario),
                        "--json")
        assert (foreign / "precious").read_text() == "not assay's"
    finally:
        shutil.rmtree(foreign.parent)
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    said = " ".join((r.stdout + r.stderr).split())
    assert "n2: the postgres workload cannot run there: PostgreSQL is not installed " \
           "(initdb, postgres, pgbench, psql not found under /nonexistent/bin)" in said, said
    assert f"n1: the postgres workload cannot run there: {foreign} exists and is not " \
           "assay's" in said, said
    assert "n3: the postgres" not in said
    assert not [e for p in (tmp_path / "r").rglob("events.ndjson")
                for e in read_ndjson(p) if e["kind"] == "prefill"]  # no IO
    assert not [p for h in cluster.hosts for p in Path(h.path).rglob("*.dat")]
    # `hosts check --scenario` says the same, per host
    assert checked.returncode == 1, checked.stdout[-2000:] + checked.stderr[-2000:]
    doc = {h["host"]["name"]: h for h in json.loads(checked.stdout)["hosts"]}
    assert doc["n3"]["ok"] and not doc["n1"]["ok"] and not doc["n2"]["ok"]
    assert "PostgreSQL is not installed" in " ".join(doc["n2"]["errors"])


def test_a_database_on_two_of_three_hosts_is_graded_per_host_and_merged(
        cluster: Cluster, tmp_path: Path) -> None:
    run_dir, rec = run_on(cluster, tmp_path, SCENARIO)
    assert rec["status"] == "passed", rec["reason"]
    # a database on n1 and n2 only, each loaded in its host's target and removed at the end
    hosts = rec["postgres"]["pg"]["hosts"]
    assert sorted(hosts) == ["n1", "n2"]
    for h, info in hosts.items():
        assert info["removed"] and info["transactions"]["commits"] > 0
        assert info["data_directory"].startswith(cluster.hosts[int(h[1]) - 1].path)
        assert not Path(info["data_directory"]).exists()
    # TPS per host near its rate, over the measured seconds; the merged series adds them
    per_host = [(h, r) for h, r in host_series_rows(run_dir) if r["c"] == "pg.tx.commit"]
    measured = {h: [r for host, r in per_host if host == h and r["phase"] == "run"]
                for h in ("n1", "n2", "n3")}
    assert not measured["n3"]
    for h in ("n1", "n2"):
        tps = sum(r["ios"] for r in measured[h]) / sum(r["dt"] for r in measured[h])
        # near the rate; above it for a while after a stall (due transactions catch up)
        assert 0.85 * RATE <= tps <= 1.5 * RATE, (h, tps)
        commits = hosts[h]["transactions"]["commits"]  # over warm-up + measured, 18 s
        assert 0.8 * RATE * 18 <= commits <= 1.2 * RATE * 18, (h, commits)
        assert all(r["target_iops"] == RATE for r in measured[h])
        assert hosts[h]["late_ms"] < 500  # pgbench started at the run's instant
    merged = [r for r in read_ndjson(run_dir / "series.ndjson") if r["c"] == "pg.tx.commit"]
    assert sum(r["ios"] for r in merged) == sum(r["ios"] for _, r in per_host) > 0
    assert [r["t"] for r in merged] == sorted({r["t"] for _, r in per_host})  # one axis
    assert all(r["target_iops"] == 2 * RATE for r in merged if r["phase"] == "run")
    # the thresholds graded merged and on each host with a database
    merged_tps = [t for t in rec["thresholds"] if t["expr"].startswith("pg.tps")]
    assert merged_tps and merged_tps[0]["passed"]
    graded = rec["cluster"]["graded"]
    for h in ("n1", "n2"):
        own = [t for t in graded[h]["thresholds"] if t["component"].startswith("pg.")]
        assert len(own) == 2 and all(t["passed"] for t in own), own
    # a host's IO/s adds fio's IOs and its commits, not the views of those (failures, lag)
    assert {n for n, c in rec["components"].items() if c["view"]} == {"pg.tx.failed",
                                                                    "pg.tx.lag"}
    rows = {r["host"]: r for r in host_rows(read_record(run_dir))}
    for h in ("n1", "n2", "n3"):
        load = [s["iops"] for n, s in graded[h]["stats"].items()
                if n.startswith("io.") or n == "pg.tx.commit"]
        assert rows[h]["iops"] == pytest.approx(sum(load)), (h, rows[h], graded[h]["stats"])
    # nothing left running on the hosts, no working copy left in their targets
    targets = [h.path for h in cluster.hosts]
    assert postgres_under(cluster.hosts) == []
    assert not [p for t in targets for p in Path(t).rglob("pg-pg.run*")]
    # the loaded database stays for the next run to reuse
    assert all((Path(t) / f"n{i + 1}.0" / "pg-pg.loaded.json").is_file()
               for i, t in enumerate(targets[:2]))


THROTTLED = """\
name: pg-throttled-on-a-host
workloads:
  pg: {kind: postgres, hosts: ":1", scale: 1, clients: 4, rate: 100}
timeline:
  duration: 20s
  steps:
    - {action: throttle, write_iops: 3, at: 8s, for: 4s}
"""


def test_a_throttle_step_reaches_the_hosts_database_as_fio(cluster: Cluster,
                                                           tmp_path: Path) -> None:
    """The server on n1 joins n1's blkio group before its load starts, as it does on a local
    run (tests/postgres/test_engine_postgres.py): a cap on the disk under n1's target stalls
    its commits for the window."""
    run_dir, rec = run_on(cluster, tmp_path, THROTTLED, (0, 1))
    [step] = [e for e in rec["events"] if e["action"] == "throttle"]
    assert step["outcome"] == "ok" and step["device"] == "target", step
    assert all(c["write_iops"].endswith(" 3") for c in step["hosts"].values()), step
    tps = {round(r["t"]): r["ios"] for h, r in host_series_rows(run_dir)
           if h == "n1" and r["c"] == "pg.tx.commit"}
    print("n1 commits/s:", tps, "window", step["t_start"], step["t_end"])
    assert sum(tps[t] for t in range(2, 8)) > 0.7 * 100 * 6, tps
    # the window, 8-12 s: commits stop, then come in bursts as WAL writes get through
    window = [tps[t] for t in range(8, 13)]
    assert sum(window) < 0.6 * 100 * 5 and sum(n < 10 for n in window) >= 2, tps
    assert postgres_under(cluster.hosts) == []


BACKED_UP = f"""\
name: pg-backup-on-hosts
workloads:
  pg: {{kind: postgres, hosts: ":2", scale: 1, clients: 4, rate: {RATE}}}
timeline:
  warmup: 3s
  duration: 15s
  steps:
    - {{name: backup, action: pg_backup, at: 6s}}
thresholds:
  pg.failed: "== 0"
"""


def test_pg_backup_copies_each_hosts_database_there_and_leaves_no_copy(
        cluster: Cluster, tmp_path: Path) -> None:
    run_dir, rec = run_on(cluster, tmp_path, BACKED_UP)
    assert rec["status"] == "passed", rec["reason"]
    [step] = [e for e in rec["events"] if e["action"] == "pg_backup"]
    assert step["outcome"] == "ok", step
    hosts = step["hosts"]
    assert sorted(hosts) == ["n1", "n2"]  # where the database runs, not n3
    for h, got in hosts.items():  # a whole database each (scale 1: about 22 MB), on its host
        target = cluster.hosts[int(h[1]) - 1].path
        assert got["bytes"] > 15e6 and got["seconds"] > 0, (h, got)
        assert got["destination"].startswith(f"{target}/pg-backups/pg-backup-{run_dir.name}")
        assert not Path(got["destination"]).exists()
        assert not (Path(target) / "pg-backups").exists()  # assay's, and empty: gone
    assert step["bytes"] == sum(g["bytes"] for g in hosts.values())
    assert rec["postgres"]["pg"]["hosts"]["n1"]["settings"]["wal_level"] == "replica"
    assert postgres_under(cluster.hosts) == []


def gone(hosts: Sequence[ClusterHost], timeout: float = 60.0) -> bool:
    """No PostgreSQL or pgbench process and no working copy left on the hosts."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not postgres_under(hosts) and not [p for h in hosts
                                              for p in Path(h.path).rglob("pg-pg.run*")]:
            return True
        time.sleep(0.5)
    return False


def test_a_lost_hosts_database_is_reported_lost_not_passed(
        cluster: Cluster, tmp_path: Path) -> None:
    scenario = tmp_path / "pg.yaml"
    scenario.write_text(SCENARIO.replace("timeline: {warmup: 3s, duration: 15s}",
                                         "timeline:\n  warmup: 3s\n  duration: 15s\n  steps:\n"
                                         "    - {action: host_fail, at: 9s, host: n2}"))
    try:
        r = assay("run", str(scenario), "--hosts", cluster.inventory, "--results",
                  str(tmp_path / "results"), "--json")
    finally:
        labcluster.host_recover(cluster, "n2")
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    assert rec["status"] == "failed"
    n2 = rec["postgres"]["pg"]["hosts"]["n2"]
    assert "its host was lost" in n2["lost"] and 8 <= n2["lost_at_s"] <= 16
    [event] = [e for e in read_ndjson(run_dir / "events.ndjson") if e["kind"] == "database_lost"]
    assert event["host"] == "n2"
    graded = rec["cluster"]["graded"]
    [lost] = [t for t in graded["n2"]["thresholds"] if t["metric"] == "database"]
    assert not lost["passed"] and "database pg lost at" in lost["note"]
    assert not graded["n2"]["passed"]
    assert all(t["passed"] for t in graded["n1"]["thresholds"])  # the survivor went on
    assert rec["postgres"]["pg"]["hosts"]["n1"]["transactions"]["commits"] > 0
    # the merged target is the survivor's from the loss on
    merged = [r for r in read_ndjson(run_dir / "series.ndjson") if r["c"] == "pg.tx.commit"]
    assert merged[-1]["target_iops"] == RATE
    # cut off from assay, n2's agent ends its load and removes its database all the same
    assert gone(cluster.hosts)


def comm(pid: int) -> str:
    """A process's name, or "" once it has ended (listed a moment ago, gone now)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_kill_9_of_assay_leaves_no_database_on_the_hosts(
        cluster: Cluster, tmp_path: Path) -> None:
    scenario = tmp_path / "pg.yaml"
    scenario.write_text(SCENARIO.replace("duration: 15s", "duration: 60s"))
    out = tmp_path / "assay.out"  # a file, not a pipe nobody reads: assay never blocks on it
    with out.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "assay", "run", str(scenario),
                                 "--hosts", cluster.inventory, "--results",
                                 str(tmp_path / "results")], stdout=fh, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + 180
        while not [p for p in postgres_under(cluster.hosts) if comm(p) == "pgbench"]:
            assert proc.poll() is None, f"assay ended before any pgbench: {out.read_text()}"
            assert time.monotonic() < end, f"no pgbench in 180 s: {out.read_text()[-3000:]}"
            time.sleep(0.5)
        time.sleep(2)
        assert postgres_under(cluster.hosts), "no database started"
    finally:
        proc.kill()
        proc.wait()
    assert gone(cluster.hosts, timeout=30)


@pytest.mark.parametrize("fio", [True, False], ids=["beside-fio-elsewhere", "no-fio"])
def test_hosts_with_a_database_alone_run_no_fio(cluster: Cluster, tmp_path: Path,
                                                fio: bool) -> None:
    scenario = tmp_path / "pg.yaml"
    io = "  io: {kind: oltp, data_iops: 50, data_files: 1, log_files: 1, log_iops: 10, " \
         "dataset: 4MiB, hosts: [n2]}\n" if fio else ""
    scenario.write_text(f"""\
name: pg-alone-on-hosts
workloads:
{io}  pg: {{kind: postgres, hosts: [n1, n3], scale: 1, clients: 2, threads: 1, rate: {RATE}}}
timeline: {{warmup: 2s, duration: 8s}}
thresholds:
  pg.tps: ">= 85% target"
  each_host.pg.tps: ">= 85% target"
""")
    r = assay("run", str(scenario), "--hosts", cluster.inventory, "--results",
              str(tmp_path / "results"), "--json")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rec = json.loads((Path(json.loads(r.stdout)["run_dir"]) / "run.json").read_text())
    assert rec["status"] == "passed"
    assert sorted(rec["postgres"]["pg"]["hosts"]) == ["n1", "n3"]
    graded = rec["cluster"]["graded"]
    assert [t["passed"] for h in ("n1", "n3") for t in graded[h]["thresholds"]] == [True] * 2
    assert sorted(rec["cluster"]["skew_ms"].get("run") or {}) == (["n2"] if fio else [])
    assert gone(cluster.hosts)


def test_assay_clean_hosts_removes_a_crashed_runs_copy_and_nothing_else(
        cluster: Cluster, tmp_path: Path) -> None:
    base = Path(cluster.hosts[1].path) / "n2.0"
    copy, foreign = base / "pg-pg.run", base / "pg-other.run"
    for d in (copy, foreign):
        d.mkdir(parents=True)
        (d / "PG_VERSION").write_text("15\n")
    (base / "pg-pg.run.json").write_text(json.dumps(  # its agent (pid) is long gone
        {"data": str(copy), "wal": None, "pid": 2 ** 22 + 7}))
    try:
        r = assay("clean", "--results", str(tmp_path / "results"), "--hosts",
                  cluster.inventory)
        assert r.returncode == 0, r.stdout + r.stderr
        said = " ".join(r.stdout.split())
        assert f"n2: removed the PostgreSQL copy {copy} of a crashed run" in said, said
        assert not copy.exists() and not (base / "pg-pg.run.json").exists()
        assert (foreign / "PG_VERSION").is_file()  # no marker: not assay's, untouched
    finally:
        shutil.rmtree(base, ignore_errors=True)

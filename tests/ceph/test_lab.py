"""The hyper-converged Ceph lab end to end: 4 hosts in network namespaces with sshd, one OSD
each, mon and mgr on the first; the built-in Ceph scenarios through the command line as a
user runs them (ceph-rebuild with its integrity mode, on RBD images, asserted on the same run);
each `platform.` threshold failing when the platform misbehaves (a planted scrub error fails
`health_err_s`; the node failure's freeze and recovery fail bounds below them); kill -9
mid-run, `assay clean`, and a destroy that leaves nothing (last: it ends the module's lab).

One lab for the module (bring-up ~25-40 s, 0.5-1.5 GiB). The lab's timers (a 10 s heartbeat
grace, out 10 s after down) and the scenarios' `end: after STEP + N` keep each failure and
rebuild to a minute or two. Assertions are about state (HEALTH_OK, PG states, fio's exit, IO
resumed, events), and timings only against the lab's own settings.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.platforms import cephstate, labceph, platformstate
from assay.platforms.labceph import CephLab
from assay.platforms.labcluster import Cluster
from assay.results.blocklog import read_rows
from assay.results.rundir import read_json, read_ndjson
from tests.conftest import needs_fio, verdict_of
from tests.sshlab import needs_netns

needs_ceph = pytest.mark.skipif(any(shutil.which(t) is None for t in labceph.TOOLS),
                                reason="Ceph is not installed (ceph-mon ceph-mgr ceph-osd "
                                       "ceph-common)")
pytestmark = [needs_netns, needs_fio, needs_ceph, pytest.mark.slow, pytest.mark.tier2]

Lab = tuple[Cluster, CephLab, Path]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("cephlabs")
    c, ceph_lab = labceph.create(f"c{uuid.uuid4().hex[:6]}", 4, root)
    try:
        yield c, ceph_lab, root
    finally:
        if Path(c.root).exists():
            labceph.destroy(c)


def assay(lab: Lab, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_LAB_DIR": str(lab[2])}
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def run_on(lab: Lab, tmp_path: Path, scenario: str, *extra: str) \
        -> tuple[subprocess.CompletedProcess[str], Path, dict[str, Any]]:
    results = tmp_path / "results"
    proc = assay(lab, "run", scenario, "--lab", lab[0].name, "--results", str(results), *extra)
    runs = sorted(p for p in results.iterdir() if p.is_dir()) if results.exists() else []
    assert runs, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc, runs[-1], read_json(runs[-1] / "run.json")


def rates_held(run: dict[str, Any], phases: set[str]) -> None:
    """The rate was graded (X-Ray's band) in these phases, cluster-wide or on every node, and
    held; each phase name as the threshold ends ("" for the whole run)."""
    graded = [(t["expr"], t["passed"]) for t in run["thresholds"] if " in band" in t["expr"]]
    graded += [(t["expr"], t["passed"]) for h in run["cluster"]["graded"].values()
               for t in h["thresholds"] if " in band" in t["expr"]]
    assert {e.split(" in band")[1].strip() for e, _ in graded} == phases, graded
    assert all(ok for _, ok in graded), graded


def steps(run_dir: Path) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in read_ndjson(run_dir / "events.ndjson") if e["kind"] == "step"}


def healthy(lab: Lab, timeout: float = 300) -> dict[str, Any]:
    return labceph.wait_healthy(lab[1], 4, timeout)


def images(lab: Lab) -> list[str]:
    out = labceph.ceph(lab[1], "osd", "pool", "ls")  # the pool is there ...
    assert lab[1].pool in out.split()
    listed = subprocess.run(["rbd", "-c", lab[1].conf, "ls", "-p", lab[1].pool], text=True,
                            capture_output=True, check=True).stdout
    return listed.split()


@pytest.mark.timeout(900)
def test_the_lab_is_a_healthy_hyperconverged_cluster(lab: Lab) -> None:
    c, ceph_lab, _ = lab
    st = healthy(lab)
    assert st["osdmap"]["num_up_osds"] == st["osdmap"]["num_in_osds"] == 4
    tree = json.loads(labceph.ceph(ceph_lab, "osd", "tree", "-f", "json"))
    hosts = {n["name"]: n.get("children", []) for n in tree["nodes"] if n["type"] == "host"}
    assert sorted(hosts) == ["n1", "n2", "n3", "n4"]  # one CRUSH host per lab host
    assert all(len(children) == 1 for children in hosts.values())
    dump = json.loads(labceph.ceph(ceph_lab, "osd", "dump", "-f", "json"))
    for osd in dump["osds"]:  # each OSD bound to its own host's address, in its namespace
        host = c.hosts[osd["osd"]]
        assert osd["public_addr"].startswith(f"{host.address}:")
    pool = next(p for p in dump["pools"] if p["pool_name"] == ceph_lab.pool)
    assert (pool["size"], pool["min_size"]) == (3, 2)
    rule = json.loads(labceph.ceph(ceph_lab, "osd", "crush", "rule", "dump", "-f", "json"))
    assert any(s.get("type") == "host" for r in rule for s in r["steps"]
               if s["op"].startswith("chooseleaf"))
    assert labceph.ceph(ceph_lab, "config", "get", "osd", "osd_recovery_sleep_hdd") == "0.000000"
    # cephx: without the keyring the cluster refuses
    anonymous = subprocess.run(["ceph", "-c", ceph_lab.conf, "--keyring", "/dev/null",
                                "--connect-timeout", "10", "health"], capture_output=True,
                               text=True, timeout=60)
    assert anonymous.returncode != 0
    # the mon and mgr live in the first host's namespace
    pids = labceph.daemon_pids(ceph_lab)
    assert set(pids) == {"mon.a", "mgr.x", "osd.0", "osd.1", "osd.2", "osd.3"}
    netns = os.readlink(f"/proc/{pids['mon.a']}/ns/net")
    assert netns == os.readlink(f"/proc/{pids['osd.0']}/ns/net")
    assert netns != os.readlink(f"/proc/{pids['osd.3']}/ns/net")
    text = Path(c.inventory).read_text()
    assert f"assay_ceph_conf={ceph_lab.conf}" in text and "assay_ceph_pool=assay" in text


@pytest.mark.timeout(600)
def test_snapshot_impact_passes_and_leaves_no_image(lab: Lab, tmp_path: Path) -> None:
    healthy(lab)
    proc, run_dir, run = run_on(lab, tmp_path, "ceph-snapshot-impact", "--duration", "45s",
                                "--set", "db.dataset=64MiB")
    assert proc.returncode == 0, verdict_of(proc)
    assert run["status"] == "passed"
    rates_held(run, {"before", ""})  # every node before the snapshots, the cluster throughout
    snaps = [e for e in read_ndjson(run_dir / "events.ndjson")
             if e["kind"] == "step" and e["name"] == "snap"]
    assert len(snaps) >= 2 and all(e["outcome"] == "ok" for e in snaps)
    assert "rbd snap create" in snaps[0]["output"]
    ended = [e for e in read_ndjson(run_dir / "events.ndjson") if e["kind"] == "load"
             and e.get("outcome") == "ended"]
    assert ended and ended[0]["exit_code"] == 0  # fio exited 0 on every host
    rows = cephstate.read(run_dir)
    assert len(rows) >= 30 and all(r["health"] == "HEALTH_OK" for r in rows[-5:])
    assert images(lab) == []  # the run's images and snapshots are gone


@pytest.mark.timeout(900)
def test_node_failure_freezes_io_then_rebuilds_on_the_survivors(lab: Lab,
                                                                 tmp_path: Path) -> None:
    healthy(lab)
    # the built-in as a user runs it, on a smaller data set (less to rebuild: a shorter test)
    proc, run_dir, run = run_on(lab, tmp_path, "ceph-node-failure", "--set", "db.dataset=64MiB")
    assert proc.returncode == 0, verdict_of(proc)
    assert run["status"] == "passed"
    assert list(run["cluster"]["lost"]) == ["n4"]  # only the cut node; the frozen ones stay
    # n4 rejoined the load after its link was down for minutes (its run directory there was
    # removed when it learnt its session had ended: the rejoin made a new one)
    [back] = run["cluster"]["failover"]
    assert back["kind"] == "rejoin" and back["host"] == "n4" and back["ios"] > 1000, back
    # and no run directory of the run is left on any node (the hosts' /tmp is this machine's)
    assert not list(Path("/tmp").glob(f"assay-{run_dir.name}.*"))
    rates_held(run, {"before", "after rebuild"})  # every node before, the survivors after
    by_name = steps(run_dir)
    assert by_name["host_fail"]["outcome"] == "ok"
    assert by_name["rebuild"]["outcome"] == "ok" and by_name["rebuild"]["recovery_s"] > 0
    assert by_name["host_recover"]["outcome"] == "ok"
    assert "n4 rejoined the load at" in by_name["host_recover"]["output"]
    assert by_name["host_recover"]["output"].endswith("(1 instance)")
    rows = cephstate.read(run_dir)
    down = [r for r in rows if r.get("osds_up") == 3]
    assert down and any("OSD_DOWN" in r.get("checks", []) for r in rows)
    first_unclean = next(r["t"] for r in rows if not r.get("clean"))
    assert any(r["clean"] and r["t"] > first_unclean for r in rows)  # clean again without n4
    graded = {t["metric"]: t for t in run["cluster"]["thresholds"]}
    frozen, recovery = graded["io_frozen_s"]["observed"], graded["recovery_s"]["observed"]
    assert 5 <= frozen < 60 and recovery > 0  # IO froze until the OSD was marked down
    # ... after the lab's heartbeat grace (a peer misses beats for the grace less one
    # interval), and PGs stayed unclean at least until the OSD was marked out
    assert frozen >= 0.6 * labceph.HEARTBEAT_GRACE_S and recovery >= labceph.DOWN_OUT_S
    # the IO resumed on the survivors after the freeze
    late = [r for r in read_rows(run_dir, "series") if r["t"] > by_name["rebuild"]["t_end"]]
    assert sum(r["ios"] for r in late) > 0
    report = (run_dir / "report.html").read_text()  # the health band, under the IO charts
    assert '"platform":{"band"' in report and "platformSection" in report
    # the same run graded with bounds below what was measured fails
    lowered = platformstate.grade([f"platform.io_frozen_s < {max(frozen - 1, 1):g}s",
                                   f"platform.recovery_s < {max(recovery - 1, 1):g}s"], run_dir)
    assert [t["passed"] for t in lowered] == [False, False]
    assert by_name["rejoin"]["outcome"] == "ok"  # n4 came back and the data moved back
    healthy(lab)


@pytest.mark.timeout(600)
def test_rebuild_after_an_osd_fails_under_load(lab: Lab, tmp_path: Path) -> None:
    healthy(lab)
    proc, run_dir, run = run_on(lab, tmp_path, "ceph-rebuild", "--set", "db.dataset=64MiB")
    assert proc.returncode == 0, verdict_of(proc)
    assert run["status"] == "passed"
    rates_held(run, {"before", "after rebuild"})
    by_name = steps(run_dir)
    assert by_name["fail-osd"]["outcome"] == "ok" and by_name["fail-osd"]["device"] == "osd.3"
    assert "osd.3 killed" in by_name["fail-osd"]["output"]
    assert by_name["rebuild"]["outcome"] == "ok"
    assert by_name["recover-osd"]["outcome"] == "ok"
    assert "osd.3 started" in by_name["recover-osd"]["output"]
    rows = cephstate.read(run_dir)
    assert any(r.get("osds_in") == 3 for r in rows)  # marked out during the rebuild
    no_block_lost_or_corrupt(lab, run_dir, run)
    healthy(lab)  # back up and in


def no_block_lost_or_corrupt(lab: Lab, run_dir: Path, run: dict[str, Any]) -> None:
    """Integrity mode on RBD images (the built-in ceph-rebuild has it on; asserted on the same
    run): each node's agent wrote journaled blocks to an RBD image of its own through librbd
    (cache off) while the OSD failed and Ceph rebuilt; every block was verified on every node
    after the rebuild and at the end: 0 lost, stale or corrupt."""
    blocks, hosts = 4 * ((32 << 20) // 8192), {"n1", "n2", "n3", "n4"}  # integrity: 32MiB, 8k
    section = run["integrity"]
    assert section["status"] == "verified"
    assert [p["label"] for p in section["passes"]] == ["verify-rebuilt#1", "final"]
    by_name = steps(run_dir)  # the pass after the rebuild ran once every PG was active+clean
    assert by_name["verify-rebuilt"]["t_start"] >= by_name["rebuild"]["t_end"] - 0.5
    for p in section["passes"]:
        assert p["status"] == "completed" and set(p["hosts"]) == hosts
        assert p["checked"] == p["blocks"] == blocks and p["ok"] == blocks
        assert p["lost"] == p["stale"] == p["corrupt"] == p["unreadable"] == 0
    for f in section["files"]:  # an image per node, written through librbd during the rebuild
        assert f["path"].startswith(f"rbd:{lab[1].pool}/assay.ceph-rebuild.{f['host']}.")
        assert f["acknowledged"] > 0 and f["write_errors"] == 0 and f["journal_back"]
    thresholds = {t["expr"]: t for t in run["thresholds"]}
    assert thresholds["integrity.lost == 0"]["passed"]
    assert thresholds["integrity.corrupt == 0"]["passed"]
    # the driver removed the images it made for the blocks, as it does the workload's
    assert not [i for i in images(lab) if "integrity" in i]


SCRUB = """\
name: ceph-scrub-error
target: {platform: ceph}
workloads:
  db: {kind: oltp, data_iops: 60, log_iops: 10, data_files: 1, log_files: 1, dataset: 64MiB}
timeline:
  duration: 5m
  end: after repair + 5s
  steps:
    - {name: slow-recovery, action: throttle, backfills: 1, recovery_active: 1, at: 2s,
       for: 10s}
    - {name: scrub, action: scrub, at: 5s, wait_until: {done: scrub, poll: 3s}, timeout: 4m}
    - {name: corrupt, action: scrub, corrupt: true, after: scrub, timeout: 3m}
    - {name: repair, action: scrub, repair: true, after: corrupt, timeout: 3m}
thresholds:
  - platform.health_err_s == 0
"""


@pytest.mark.timeout(600)
def test_a_scrub_and_a_planted_scrub_error_under_recovery_limits(lab: Lab,
                                                                  tmp_path: Path) -> None:
    """A throttle of recovery (restored after), a deep scrub of the pool, then a scrub error
    planted in one copy, found by a deep scrub and repaired: the run fails on
    `platform.health_err_s == 0` (HEALTH_ERR until the repair), as a platform that misbehaves
    must fail it; graded again with a bound above what was measured, it passes."""
    healthy(lab)
    before = labceph.ceph(lab[1], "config", "get", "osd", "osd_max_backfills")
    scenario = tmp_path / "scrub.yaml"
    scenario.write_text(SCRUB)
    proc, run_dir, run = run_on(lab, tmp_path, str(scenario))
    by_name = steps(run_dir)
    assert by_name["slow-recovery"]["outcome"] == "ok", by_name
    assert by_name["slow-recovery"]["before"]["osd_max_backfills"] == before
    assert labceph.ceph(lab[1], "config", "get", "osd", "osd_max_backfills") == before
    assert by_name["scrub"]["outcome"] == "ok", by_name["scrub"]
    corrupt = by_name["corrupt"]  # scrub found the planted error: an event naming the PG
    assert corrupt["outcome"] == "ok" and corrupt["found"] == ["read_error"], corrupt
    assert f"pg {corrupt['pg']} inconsistent" in corrupt["output"]
    assert by_name["repair"]["outcome"] == "ok" and by_name["repair"]["pgs"] == [corrupt["pg"]]
    assert run["timeline_end"]["reason"] == "repair ended 5s before"
    err = [r for r in cephstate.read(run_dir) if r.get("health") == "HEALTH_ERR"]
    assert err and any({"OSD_SCRUB_ERRORS", "PG_DAMAGED"} & set(r.get("checks", [])) for r in err)
    assert proc.returncode == 1, verdict_of(proc)
    assert run["status"] == "failed"
    [graded] = [t for t in run["cluster"]["thresholds"] if t["metric"] == "health_err_s"]
    assert graded["passed"] is False and graded["observed"] > graded["bound"], graded
    met = platformstate.grade([f"platform.health_err_s <= {graded['observed']:g}"], run_dir)
    assert [t["passed"] for t in met] == [True]  # the failure was the platform's


@pytest.mark.timeout(600)
def test_kill_9_mid_run_then_clean_leaves_no_image(lab: Lab, tmp_path: Path) -> None:
    healthy(lab)
    results = tmp_path / "results"
    env = {**os.environ, "ASSAY_LAB_DIR": str(lab[2])}
    proc = subprocess.Popen([sys.executable, "-m", "assay", "run", "ceph-snapshot-impact",
                             "--lab", lab[0].name, "--results", str(results),
                             "--set", "db.dataset=64MiB"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        end = time.monotonic() + 300
        while time.monotonic() < end:
            runs = list(results.glob("*/events.ndjson")) if results.exists() else []
            if runs and any(e["kind"] == "load" for e in read_ndjson(runs[0])):
                break
            time.sleep(1)
        else:
            pytest.fail("the run never started its load")
        time.sleep(5)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert images(lab)  # the killed run's images are still there, until `assay clean`
    cleaned = assay(lab, "clean", "--results", str(results))
    assert cleaned.returncode == 0 and "removed RBD image" in cleaned.stdout, cleaned.stdout
    assert images(lab) == []


@pytest.mark.timeout(300)
def test_destroy_leaves_nothing(lab: Lab) -> None:
    """Last: it ends the module's lab."""
    c, ceph_lab, root = lab
    destroyed = assay(lab, "lab", "destroy", c.name)
    assert destroyed.returncode == 0, destroyed.stderr
    assert "Ceph daemon" in destroyed.stdout
    # ... and the destroy leaves no daemon, namespace, mount, loop device or file
    assert labceph.daemon_pids(ceph_lab) == {}
    alive = subprocess.run(["pgrep", "-f", ceph_lab.conf], capture_output=True, text=True)
    assert alive.stdout.strip() == ""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert all(h.netns not in netns for h in c.hosts)
    assert c.root not in Path("/proc/mounts").read_text()
    loops = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    assert c.root not in loops
    assert not Path(c.root).exists()

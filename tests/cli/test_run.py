"""The core run path on real fio: results directory, catalogue, JSON, safety, stop paths."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from assay.plan import plan_text
from assay.results.catalogue import Catalogue
from assay.results.rundir import read_ndjson
from tests.conftest import needs_fio, needs_root

pytestmark = needs_fio

SMALL = """\
name: small-oltp
workloads:
  db:
    kind: oltp
    data_iops: 400
    log_iops: 40
    dataset: 96MiB
    load: {pacing: even}
timeline: {warmup: 1s, duration: 3s}
thresholds:
  db: rate
  db.data.read.lat_p99: "< 2s"
"""


def cli(*args: str, results: Path, **kw) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_RESULTS": str(results)}
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True,
                          env=env, timeout=180, **kw)


def test_a_run_keeps_everything_needed_to_trust_and_rerender_it(run_scenario, results):
    outcome, run = run_scenario(SMALL)
    assert outcome.status == "passed", [(t["expr"], t["observed"]) for t in run["thresholds"]]
    d = outcome.run_dir
    assert (d / "scenario.yaml").read_text() == SMALL
    assert (d / "hosts" / "local" / "run.fio").read_text().startswith("; assay run")
    assert (d / "hosts" / "local" / "run.out.json").stat().st_size > 0
    env, target = run["environment"], run["target"]
    for key in ("hostname", "cpu_model", "cpu_count", "mem_bytes", "kernel", "fio_version",
                "assay_version"):
        assert env[key], key
    for key in ("fstype", "mount_options", "free_bytes", "dataset_bytes", "direct_io"):
        assert key in target, key
    assert run["scenario"]["sha256"] and run["scenario"]["seed"] == 1
    # every component has a row for every measured second
    rows = list(read_ndjson(d / "series.ndjson"))
    comps = {"db.data.read", "db.data.write", "db.log.write"}
    measured = [r for r in rows if r["phase"] == "run"]
    for c in comps:
        assert sum(1 for r in measured if r["c"] == c) >= 3
    assert {r["c"] for r in rows} == comps
    # the temporary target is gone, the catalogue knows the run
    assert not Path(target["path"]).exists()
    assert Catalogue(results).find(d.name) == d.resolve() or Catalogue(results).find(d.name)
    stats = run["stats"]["db.data.read"]
    assert 380 <= stats["iops"] * 2 <= 420  # 200 reads/s: half of data_iops
    assert stats["lat_p50_ms"] <= stats["lat_p99_ms"] <= stats["lat_max_ms"]


def test_cli_json_document_and_show(tmp_path, results):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL)
    r = cli("run", str(scenario), "--json", "--duration", "2s", results=results)
    doc = json.loads(r.stdout)
    # the document is the point: a 2 s run's verdict is the disk's (a writeback stall after
    # the prefill once left it incomplete at 1.5 s graded, on an idle machine)
    assert (doc["status"], r.returncode) in (("passed", 0), ("failed", 1), ("incomplete", 3)), \
        r.stderr
    assert Path(doc["run_dir"]).is_dir()
    assert {"expr", "observed", "passed"} <= set(doc["thresholds"][0])
    comp = doc["workloads"]["db"]["components"]["data.write"]
    for key in ("target_iops", "achieved_iops", "mbps", "lat_avg_ms", "lat_p99_ms",
                "lat_max_ms"):
        assert key in comp
    assert comp["target_iops"] == 200
    shown = cli("show", "last", "--json", results=results)
    assert json.loads(shown.stdout)["run_id"] == doc["run_id"]
    listed = cli("runs", results=results)
    assert doc["run_id"] in listed.stdout


def test_failed_threshold_exits_1(tmp_path, results):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL.replace('"< 2s"', '"< 1us"'))
    r = cli("run", str(scenario), "--duration", "2s", results=results)
    assert r.returncode == 1, r.stderr
    assert "FAILED" in r.stdout


def test_refuses_to_overwrite_a_file_assay_did_not_create(tmp_path, results):
    target = tmp_path / "target"
    target.mkdir()
    precious = target / "db.data.1.dat"
    precious.write_text("the only copy of something")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL)
    r = cli("run", str(scenario), "--path", str(target), results=results)
    assert r.returncode == 2
    assert "did not create" in r.stderr and "--force" in r.stderr
    assert precious.read_text() == "the only copy of something"


def test_prefill_is_reused_until_the_data_changes(run_scenario, tmp_path):
    target = tmp_path / "t"
    _, first = run_scenario(SMALL, duration=1, target_dir=target)
    _, second = run_scenario(SMALL, duration=1, target_dir=target)
    assert first["prefill"]["files"] == 6 and second["prefill"]["reused_files"] == 6
    changed = SMALL.replace("load: {pacing: even}", "load: {pacing: even}\n    data: "
                                                    "{compressibility: 2}")
    _, third = run_scenario(changed, duration=1, target_dir=target)
    assert third["prefill"]["files"] == 6  # every file holds data of the new pattern
    _, fourth = run_scenario(changed, duration=1, target_dir=target, fresh=True)
    assert fourth["prefill"]["files"] == 6 and fourth["prefill"]["fresh"]


def wait_for_series(results: Path, timeout: float = 60) -> Path:
    end = time.time() + timeout
    while time.time() < end:
        for p in results.glob("*/series.ndjson"):
            if p.stat().st_size > 0 and len(p.read_text().splitlines()) >= 6:
                return p.parent
        time.sleep(0.3)
    raise AssertionError("no series appeared")


def start_long_run(tmp_path: Path, results: Path) -> tuple[subprocess.Popen[str], Path]:
    """`assay run` of a 60 s scenario in the background, once its series is being written."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL)
    env = {**os.environ, "ASSAY_RESULTS": str(results)}
    p = subprocess.Popen([sys.executable, "-m", "assay", "run", str(scenario), "--duration",
                          "60s"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    return p, wait_for_series(results)


def test_ctrl_c_stops_fio_and_keeps_partial_results(tmp_path, results):
    p, run_dir = start_long_run(tmp_path, results)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert run["stats"]["db.data.read"]["ios"] > 0
    assert not subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True).stdout


def test_a_dying_fio_aborts_the_run_with_its_reason(tmp_path, results):
    p, run_dir = start_long_run(tmp_path, results)
    subprocess.run(["pkill", "-KILL", "-f", f"{run_dir}/hosts/local/run.fio"], check=False)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3, err
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "aborted" and "fio exited" in run["reason"]
    assert list(read_ndjson(run_dir / "series.ndjson"))


def test_a_frozen_fio_is_shown_live_as_silent_not_at_its_last_rate(tmp_path, results):
    """fio stopped, as IO frozen on a platform stops its seconds (a Ceph node failure): the
    live line says how long no second came, not the last second's IO/s as if current."""
    p, run_dir = start_long_run(tmp_path, results)
    pattern = f"{run_dir}/hosts/local/run.fio"
    subprocess.run(["pkill", "-STOP", "-f", pattern], check=False)
    time.sleep(14)  # a progress line is printed every 10 s: one falls 5 s or more into this
    subprocess.run(["pkill", "-CONT", "-f", pattern], check=False)
    time.sleep(11)  # and one after fio went on
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    lines = [ln for ln in out.splitlines() if ln.startswith("  run:")]
    silent = [int(m) for ln in lines for m in re.findall(r"no new second from fio for (\d+)s",
                                                         ln)]
    assert silent and 5 <= max(silent) <= 16, lines
    assert "IO/s" in lines[-1], lines  # figures again once fio went on


def test_the_live_line_counts_each_io_once(tmp_path, results):
    """Exchange's per-database components are views of its pooled ones' IOs: the live IO/s
    is the workload's rate, not twice it (the demo showed 544 IO/s for 274)."""
    text = ("name: x\nworkloads:\n  mail: {kind: exchange, mailboxes: 2000, databases: 2, "
            "dataset: 256MiB}\ntimeline: {warmup: 1s, duration: 5s}\n")
    (tmp_path / "x.yaml").write_text(text)
    target = sum(c.target_iops or 0 for c in plan_text(text, "x.yaml").components)
    proc = cli("run", str(tmp_path / "x.yaml"), results=results)
    last = [ln for ln in proc.stdout.splitlines() if ln.startswith("  run: 100%")]
    shown = re.search(r"mail ([\d,]+) IO/s", last[0] if last else "")
    assert shown, proc.stdout[-2000:]
    assert 0.6 * target < float(shown.group(1).replace(",", "")) < 1.4 * target, last


@needs_root
def test_a_dataset_larger_than_the_free_space_is_refused_before_writing(loopfs, tmp_path,
                                                                         results):
    _, mnt = loopfs("xfs", "320M")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL.replace("96MiB", "2GiB"))
    r = cli("run", str(scenario), "--path", str(mnt), results=results)
    assert r.returncode == 2, r.stderr  # refused, as a host short of space is
    assert "not enough free space" in r.stderr and "need 2.0GiB more" in r.stderr
    assert not list(mnt.glob("*.dat"))
    (record,) = results.glob("*/run.json")  # the refusal is on record
    run = json.loads(record.read_text())
    assert run["status"] == "aborted" and "not enough free space" in run["reason"]


@needs_root
def test_raw_block_device_target_refused_with_a_filesystem_then_run_when_blank(
        loopfs, tmp_path, results, monkeypatch):
    dev, mnt = loopfs("xfs", "400M")
    monkeypatch.setenv("ASSAY_STATE_DIR", str(tmp_path / "state"))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL.replace("name: small-oltp",
                                      f"name: raw\ntarget: {{device: {dev}}}"))
    r = cli("run", str(scenario), "--duration", "2s", results=results)
    assert r.returncode == 2 and "refusing to write" in r.stderr and "xfs" in r.stderr
    subprocess.run(["umount", str(mnt)], check=True)
    assert cli("run", str(scenario), results=results).returncode == 2  # still holds xfs
    subprocess.run(["wipefs", "-a", dev], check=True, capture_output=True)
    r = cli("run", str(scenario), "--duration", "2s", "--json", results=results)
    assert r.returncode == 0, r.stderr
    run = json.loads((Path(json.loads(r.stdout)["run_dir"]) / "run.json").read_text())
    job = (Path(json.loads(r.stdout)["run_dir"]) / "hosts/local/run.fio").read_text()
    assert f"filename={dev}" in job and "offset=" in job
    assert run["target"]["backing"]["device"] == dev


def test_set_and_warmup_override_one_run_and_are_recorded(tmp_path, results):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL)
    r = cli("run", str(scenario), "--set", "db.data_iops=100", "--set", "db.read_pct=100",
            "--warmup", "0", "--duration", "2s", "--json", results=results)
    # graded, passed or failed: a rate over 2 s is noise here (37.7 of 40 log writes/s once);
    # what this test checks is that the overrides ran and are recorded
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] in ("passed", "failed")
    assert doc["workloads"]["db"]["components"]["data.read"]["target_iops"] == 100
    assert "data.write" not in doc["workloads"]["db"]["components"]
    run_dir = Path(doc["run_dir"])
    stored = (run_dir / "scenario.yaml").read_text()
    assert stored.startswith(f"# {scenario} with db.data_iops=100, db.read_pct=100")
    assert json.loads((run_dir / "run.json").read_text())["measured_window_s"] == [0, 2]
    bad = cli("run", str(scenario), "--set", "db.dataiops=1", results=results)
    assert bad.returncode == 2 and "no parameter 'dataiops'" in bad.stderr


def test_a_path_with_fio_special_characters_is_used_exactly(tmp_path, results):
    """`:` separates directories for fio, `;` and `#` start comments in a job file: the target
    reaches fio through ${ASSAY_TARGET}, escaped, so the data lands in exactly that directory."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL)
    target = tmp_path / "pool:a;b#c"
    target.mkdir()
    r = cli("run", str(scenario), "--duration", "2s", "--path", str(target), results=results)
    assert r.returncode in (0, 1), r.stderr
    files = list(target.glob("*.dat"))
    assert files and all(p.name.startswith("db.") for p in files)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("pool") and p != target]


def test_a_mistyped_path_is_not_created_on_another_disk(tmp_path, results):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL)
    r = cli("run", str(scenario), "--path", str(tmp_path / "no-such" / "dir"), results=results)
    assert r.returncode == 2 and "does not exist" in r.stderr
    assert not (tmp_path / "no-such").exists()

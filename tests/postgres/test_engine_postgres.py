"""kind postgres end to end with Debian's PostgreSQL, as CI runs it: a graded fixed-rate run
beside fio with a throttle window, the postmaster killed, the TPC-C-like mix with a backup
stream and the WAL on a second target, and assay itself killed."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from assay import leftovers as run_leftovers
from assay.report.terminal import print_summary
from assay.results.rundir import read_record
from tests.postgres.conftest import leftovers, needs_postgres
from tests.realfs import Machine

pytestmark = needs_postgres


def series(run_dir: Path, component: str) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (run_dir / "series.ndjson").read_text().splitlines()]
    return [r for r in rows if r["c"] == component]


def results_by_text(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["expr"]: r for r in record["thresholds"]}


FIXED = """\
name: pg-fixed-rate
workloads:
  pg: {{kind: postgres, scale: 1, clients: 4, rate: 100}}
  io: {{kind: oltp, data_iops: 40, data_files: 1, log_files: 0, dataset: 16MiB}}
timeline:
  duration: 20s
  steps:
    - {{action: throttle, device: {dev}, write_iops: 3, at: 8s, for: 4s}}
thresholds:
  - "pg.tps >= 80% target before"
  - "pg.failed == 0"
  - "pg.lag.lat_max < 1s"
"""


def test_fixed_rate_run_is_graded_and_a_throttle_shows_in_tps_and_lag(pg_machine: Machine,
                                                                       run_scenario):
    dev, mnt = pg_machine.filesystem("xfs")
    target = mnt / "t"
    text = FIXED.format(dev=dev)
    outcome, record = run_scenario(text, target_dir=target)
    got = results_by_text(record)
    # graded: the database held its rate before the throttle, and fell behind because of it
    assert got["pg.tps >= 80% target before"]["passed"], got
    assert got["pg.failed == 0"]["passed"], got
    assert not got["pg.lag.lat_max < 1s"]["passed"] and outcome.status == "failed"
    rows = series(outcome.run_dir, "pg.tx.commit")
    tps = {round(r["t"]): r["ios"] for r in rows}
    assert sum(tps[t] for t in range(2, 8)) > 0.8 * 100 * 6, tps
    # the window, 8-12 s: commits stop, then come in bursts as WAL writes get through (on a
    # loaded machine a burst may fall inside it)
    window = [tps[t] for t in range(8, 13)]
    assert sum(window) < 0.6 * 100 * 5 and sum(n < 10 for n in window) >= 2, f"{tps}"
    # the schedule lag: none before; seconds of it as the stalled transactions complete
    lag = {round(r["t"]): r["behind_s"] for r in rows}
    after = max(lag[t] for t in range(12, 17))
    assert after > 1.5 and after > 3 * max(lag[t] for t in range(2, 8)), lag
    # fio ran beside the database, on the same axis
    assert sum(r["ios"] for r in series(outcome.run_dir, "io.data.read")) > 100
    # the configuration is recorded; the working cluster is gone, the loaded one kept
    pg = record["postgres"]["pg"]
    assert pg["settings"]["shared_buffers"].endswith("kB") and pg["rate"] == 100
    assert pg["removed"] and not Path(pg["data_directory"]).exists()
    assert (target / "pg-pg.loaded" / "PG_VERSION").exists()
    assert leftovers(target) == []
    # shown beside the storage: the report's series and the terminal's database line
    assert "pg.tx.commit" in (outcome.run_dir / "report.html").read_text()
    out = io.StringIO()
    print_summary(Console(file=out, width=200), read_record(outcome.run_dir), outcome.run_dir)
    line = next(x for x in out.getvalue().splitlines() if "database pg:" in x)
    assert "tx/s" in line and "schedule lag p99" in line and "failed 0" in line


def test_postmaster_killed_aborts_the_run_with_that_reason(run_scenario, tmp_path, results):
    text = ("name: pg-kill\nworkloads:\n  pg: {kind: postgres, scale: 1, rate: 100}\n"
            "timeline: {duration: 30s}\n")
    killed: list[int] = []

    def kill_postmaster() -> None:
        end = time.monotonic() + 60
        while time.monotonic() < end and not killed:
            for state in results.glob("*/postgres/pg/cluster.json"):
                info = json.loads(state.read_text())
                events = state.parents[2] / "events.ndjson"  # written after cluster.json
                if info.get("pid") and events.exists() \
                        and '"kind":"load"' in events.read_text():
                    time.sleep(2)  # pgbench is running: let it commit
                    os.kill(info["pid"], signal.SIGKILL)
                    killed.append(info["pid"])
                    return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_postmaster, daemon=True)
    killer.start()
    t0 = time.monotonic()
    outcome, record = run_scenario(text)
    killer.join(5)
    assert killed and time.monotonic() - t0 < 25
    assert outcome.status == "aborted"
    assert f"postmaster (pid {killed[0]}) died (killed by signal 9)" in outcome.reason
    data = Path(record["postgres"]["pg"]["data_directory"])
    assert not data.exists() and leftovers(data.parent) == []
    assert leftovers(outcome.run_dir) == []  # pgbench (its cwd is the run's postgres/pg)
    assert any(r["ios"] for r in series(outcome.run_dir, "pg.tx.commit"))  # kept what it had


def test_tpcc_mix_reports_nopm_with_a_backup_stream_and_wal_apart(run_scenario, tmp_path,
                                                                  outside):
    wal = outside / "wal"
    backup = tmp_path / "backup"
    text = f"""\
name: pg-tpcc
workloads:
  pg: {{kind: postgres, driver: tpcc, warehouses: 1, clients: 2, threads: 1, wal_path: {wal}}}
timeline:
  duration: 10s
  steps:
    - {{action: pg_backup, at: 1s, to: {backup}}}
thresholds:
  pg.nopm: ">= 60"
  pg.failed: "== 0"
"""
    outcome, record = run_scenario(text)
    assert outcome.status == "passed", outcome.reason
    stats = record["stats"]
    nopm = results_by_text(record)["pg.nopm >= 60"]["observed"]
    assert nopm == pytest.approx(stats["pg.new_order.commit"]["iops"] * 60, rel=1e-5)
    assert nopm > 60
    mix = {k: stats[f"pg.{k}.commit"]["ios"] for k in
           ("new_order", "payment", "order_status", "delivery", "stock_level")}
    total = stats["pg.tx.commit"]["ios"]
    assert sum(mix.values()) == total and mix["new_order"] and mix["payment"]
    if total >= 300:  # a 4 % type is then missing once in 200,000 runs
        assert all(mix.values()) and 0.3 < mix["new_order"] / total < 0.6, mix
    (step,) = [e for e in record["events"] if e["action"] == "pg_backup"]
    assert step["outcome"] == "ok" and step["bytes"] > 80e6 and step["mbps"] > 0
    assert not Path(step["destination"]).exists()  # the copy goes unless `keep: true`
    # copied on the run's one host by its agent, as each host of a cluster run copies its own
    assert step["hosts"] == {"local": {"bytes": step["bytes"], "seconds": pytest.approx(
        step["backup_s"], abs=0.01), "destination": step["destination"]}}
    pg = record["postgres"]["pg"]
    assert pg["wal_directory"] == str(wal / "pg-pg.wal") and pg["settings"]["wal_level"] == \
        "replica"
    assert not (wal / "pg-pg.wal").exists() and pg["dataset"]["database_bytes"] > 80e6


def assay_with_pgbench_running(tmp_path: Path, name: str, rate: int) \
        -> tuple[subprocess.Popen[bytes], Path]:
    """`assay run` of a 60 s database load in a process of its own, returned once pgbench
    runs; and its results directory."""
    scenario = tmp_path / "pg.yaml"
    scenario.write_text(f"name: {name}\nworkloads:\n  pg: {{kind: postgres, scale: 1, "
                        f"rate: {rate}}}\ntimeline: {{duration: 60s}}\n")
    results = tmp_path / "results"
    assay = Path(sys.executable).with_name("assay")
    proc = subprocess.Popen([str(assay), "run", str(scenario), "--results", str(results)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 60
    while time.monotonic() < end and proc.poll() is None:
        events = list(results.glob("*/events.ndjson"))
        if events and '"kind":"load"' in events[0].read_text():
            return proc, results
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    raise AssertionError(f"pgbench never started (assay exited {proc.returncode})")


def test_assay_killed_leaves_nothing_running_and_clean_removes_the_cluster(tmp_path):
    proc, results = assay_with_pgbench_running(tmp_path, "pg-crash", 50)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (found,) = results.glob("*/postgres/pg/cluster.json")
    state = json.loads(found.read_text())
    assert state["pid"]
    data = Path(state["data"])
    end = time.monotonic() + 15  # the parent-death signal ends the server at once
    while leftovers(data) and time.monotonic() < end:
        time.sleep(0.1)
    assert leftovers(data) == []
    done = run_leftovers.clean(results)
    assert any(f"removed the PostgreSQL cluster {data}" in line for line in done), done
    assert not data.exists()


def test_ctrl_c_keeps_the_transactions_pgbench_had_not_yet_written_out(tmp_path):
    """pgbench buffers its per-transaction log (4 KiB, here about 5 s of commits): a signal
    to it would lose them; ending its sessions makes it write them out as it exits."""
    proc, results = assay_with_pgbench_running(tmp_path, "pg-int", 20)
    try:
        time.sleep(3)  # about 60 commits, all still in pgbench's buffer
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    (run_dir,) = results.glob("*_pg-int_*")
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "interrupted"
    committed = sum(r["ios"] for r in series(run_dir, "pg.tx.commit"))
    assert committed >= 30, committed
    assert record["postgres"]["pg"]["transactions"]["commits"] >= committed


def test_without_postgresql_the_run_names_the_package_before_any_io(run_scenario, tmp_path,
                                                                    monkeypatch):
    from assay.agent import pgserver
    from assay.exitcodes import UserError

    monkeypatch.setattr(pgserver, "BIN_ROOT", tmp_path / "no-postgresql")
    target = tmp_path / "target"
    text = ("name: pg-missing\nworkloads:\n  pg: {kind: postgres}\n"
            "  io: {kind: oltp, data_iops: 40, data_files: 1, log_files: 0, dataset: 16MiB}\n"
            "timeline: {duration: 5s}\n")
    with pytest.raises(UserError, match=r"install the Debian package `postgresql`"):
        run_scenario(text, target_dir=target)
    assert not list(target.glob("*.dat")) and not list(target.glob("pg-*"))  # no IO at all


def test_a_timeline_end_ends_pgbench_with_the_load_and_grades_up_to_there(run_scenario):
    """`end: after STEP + 2s` before pgbench's -T: its clients ended by assay are its normal
    end (not "pgbench exited with status 2"), its seconds graded to where the load ended."""
    text = ("name: pg-end\nworkloads:\n  pg: {kind: postgres, scale: 1, clients: 2, rate: 50}\n"
            "timeline:\n  warmup: 2s\n  duration: 5m\n  end: after mark + 2s\n  steps:\n"
            "    - {name: mark, action: annotate, text: mid, at: 4s}\n"
            "thresholds:\n  - pg.tps >= 80% target\n")
    t0 = time.monotonic()
    outcome, record = run_scenario(text)
    assert outcome.status == "passed", outcome.reason
    assert time.monotonic() - t0 < 90  # not the 5 minutes
    end = record["timeline_end"]["t"]
    assert 8 <= end < 12 and end <= record["measured_window_s"][1] <= end + 2.5
    tps = [t for t in record["thresholds"] if t["expr"] == "pg.tps >= 80% target"]
    assert tps and tps[0]["passed"] and tps[0]["observed"] > 0
    data = Path(record["postgres"]["pg"]["data_directory"])
    assert not data.exists() and leftovers(outcome.run_dir) == []

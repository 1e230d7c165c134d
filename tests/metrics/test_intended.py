"""Coordinated omission: a stall hidden from fio's own latency shows from the due time."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from tests.conftest import needs_fio

pytestmark = needs_fio

EVEN = """\
name: co
workloads:
  db:
    kind: oltp
    data_iops: 1000
    log_files: 0
    read_pct: 100
    dataset: 64MiB
    load: {pacing: even, iodepth: 8}
timeline: {warmup: 1s, duration: 5s}
"""


def stall_fio_once(results, seconds: float) -> threading.Thread:
    """SIGSTOP the run's fio jobs for `seconds`, 2.5 s into the load: a storage stall."""

    def stall() -> None:
        end = time.time() + 60
        while time.time() < end:
            runs = list(results.glob("*/series.ndjson"))
            if runs and runs[0].read_text().count("\n") >= 2:
                break
            time.sleep(0.1)
        pids = subprocess.run(["pgrep", "-f", "hosts/local/run.fio"], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            os.kill(int(pid), signal.SIGSTOP)
        time.sleep(seconds)
        for pid in pids:
            os.kill(int(pid), signal.SIGCONT)

    t = threading.Thread(target=stall, daemon=True)
    t.start()
    return t


def test_a_stall_shows_in_intended_latency_but_not_in_fios(run_scenario, results):
    staller = stall_fio_once(results, 1.0)
    outcome, run = run_scenario(EVEN)
    staller.join()
    s = run["stats"]["db.data.read"]
    assert run["intended_latency"].startswith("from fio's issue logs")
    intended = s["intended"]
    # fio caught up after the stall, so its own view looks healthy ...
    assert s["lat_p99_ms"] < 300
    # ... but IOs due during the stall waited up to the stall's length
    assert intended["lat_intended_max_ms"] > 700
    assert intended["lat_intended_p99_ms"] > 10 * s["lat_p99_ms"]
    assert intended["late_20ms_pct"] > 5
    assert not list((outcome.run_dir / "hosts" / "local").glob("*_clat.*.log"))


def test_no_stall_means_intended_close_to_measured(run_scenario):
    _, run = run_scenario(EVEN)
    s = run["stats"]["db.data.read"]
    assert s["intended"]["lat_intended_p50_ms"] < 50
    assert s["intended"]["late_20ms_pct"] < 5

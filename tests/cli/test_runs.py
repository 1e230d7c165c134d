"""`assay runs` on a run whose assay process vanished (SIGKILL) mid-run, on real fio: listed as
crashed with its last recorded second, and show, report and export work on what it kept."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from assay.results.blocklog import read_rows
from tests.cli.test_run import SMALL, cli
from tests.conftest import needs_fio

pytestmark = needs_fio

# assay itself, with 2 s blocks so that a short run seals some before it is killed
KILLABLE = "import sys; import assay.results.blocklog as b; b.BLOCK_S = 2.0; " \
           "from assay.cli import main; sys.argv[0] = 'assay'; main()"


def test_a_killed_run_is_crashed_with_its_last_second_and_stays_readable(tmp_path, results):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL)
    env = {**os.environ, "ASSAY_RESULTS": str(results)}
    target = tmp_path / "target"  # a killed assay cannot remove a temporary one: ours
    target.mkdir()
    p = subprocess.Popen([sys.executable, "-c", KILLABLE, "run", str(scenario), "--duration",
                          "60s", "--path", str(target)], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    run_dir = None
    try:
        end = time.time() + 90
        while time.time() < end and run_dir is None:
            for blocks in results.glob("*/series.blocks"):
                if blocks.stat().st_size and (blocks.parent / "series.ndjson").stat().st_size:
                    run_dir = blocks.parent
            time.sleep(0.3)
        assert run_dir is not None, "no block was sealed"
        p.send_signal(signal.SIGKILL)  # no handler, no cleanup: as a power cut for assay
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
        # the fio it had started runs on: stop it, by its own pid
        if run_dir is not None:
            pids = subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True,
                                  text=True).stdout.split()
            for pid in pids:
                os.kill(int(pid), signal.SIGKILL)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "running"

    listed = json.loads(cli("runs", "--json", results=results).stdout)
    row = next(r for r in listed if r["id"] == run_dir.name)
    assert row["status"] == "crashed"
    seconds = [r["t"] for r in read_rows(run_dir, "series") if r["c"] == "db.data.read"]
    assert row["last_t"] == max(seconds) >= 3
    # every second up to the last is there once, across the blocks and the tail
    assert len(seconds) == len(set(seconds)) and max(seconds) - min(seconds) <= len(seconds)
    table = cli("runs", results=results)
    assert "crashed at" in table.stdout

    show = cli("show", run_dir.name, results=results)
    assert show.returncode == 0 and "crashed" in show.stdout, show.stderr
    # what it measured up to the kill: its status, time and statistics (not "RUNNING,
    # measured 0s" with no table)
    assert f"CRASHED at {row['last_t']:.0f}s" in show.stdout and "RUNNING" not in show.stdout
    assert "measured 0s" not in show.stdout and "data.read" in show.stdout
    doc = json.loads(cli("show", run_dir.name, "--json", results=results).stdout)
    assert doc["workloads"]["db"]["components"]["data.read"]["achieved_iops"] > 0
    report = cli("report", run_dir.name, results=results)
    assert report.returncode == 0, report.stderr
    assert (run_dir / "report.html").stat().st_size > 0
    exported = cli("export", run_dir.name, "--format", "csv", results=results)
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert len([r for r in rows if r["component"] == "db.data.read"]) == len(seconds)
    assert not subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True).stdout


def test_runs_lists_a_finished_run_without_a_last_second(run_scenario, results):
    outcome, _ = run_scenario(SMALL, duration=1)
    listed = json.loads(cli("runs", "--json", results=results).stdout)
    row = next(r for r in listed if r["id"] == Path(outcome.run_dir).name)
    assert row["status"] == "passed" and "last_t" not in row

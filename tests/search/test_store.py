"""A real search killed mid-way (SIGTERM while a trial runs) resumes from its stored trials:
finished trials are not run again and the answer is the one an unbroken search gives."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import needs_fio

pytestmark = needs_fio

# a deterministic limit without throttling: achieved IOPS = asked IOPS, and the threshold
# caps it at 300, so every rate up to ~300 passes and every rate above fails
SCENARIO = """\
name: resume-demo
target: {{path: {path}}}
workloads:
  db: {{kind: oltp, data_iops: 100, read_pct: 100, data_files: 1, log_files: 0,
        dataset: 16MiB, load: {{pacing: even}}}}
timeline: {{warmup: 0s, duration: 2s}}
thresholds:
  db.data.read.iops: "<= 300"
"""


def read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


@pytest.mark.tier2  # one of the suite's longest: the second tier
def test_killed_search_resumes_from_its_trials(tmp_path: Path) -> None:
    scenario = tmp_path / "resume.yaml"
    scenario.write_text(SCENARIO.format(path=tmp_path / "data"))
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "assay", "search", str(scenario), "--vary", "db.data_iops",
            "--from", "100", "--to", "400", "--precision", "5%", "--results", str(results)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    record: dict = {}
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            files = list((results / "searches").glob("*/search.json"))
            record = read(files[0]) if files else {}
            trials = record.get("trials", [])
            if len(trials) >= 3 and trials[-1]["status"] == "running":
                time.sleep(0.5)  # inside the third trial's fio run
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the search ended before it could be killed"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    search_id = record["id"]
    stopped = read(results / "searches" / search_id / "search.json")
    assert stopped["status"] == "interrupted"
    finished = [t for t in stopped["trials"] if t["status"] in ("passed", "failed")]
    assert len(finished) == 2

    again = subprocess.run(argv + ["--json", "--curve", "--chart", str(tmp_path / "c.svg")],
                           capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    assert f"resuming search {search_id}: 2 finished trials reused" in again.stderr
    done = json.loads(again.stdout)
    assert done["id"] == search_id and done["status"] == "done"
    # the finished trials were kept, not re-run; the killed one was set aside and re-run
    assert [t["run_id"] for t in done["trials"][:2]] == [t["run_id"] for t in finished]
    assert len(done["abandoned"]) == 1
    assert done["abandoned"][0]["value"] == done["trials"][2]["value"]
    answer = done["answer"]
    assert answer["status"] == "found"
    assert 270 <= answer["last_pass"] <= 300 < answer["first_fail"] * 1.01
    assert len({t["value"] for t in done["trials"]}) == len(done["trials"])
    # the curve: 10-100 % of the answer as fixed rates, all under the ceiling, all passing
    curve = done["curve"]
    assert [t["fraction"] for t in curve] == [0.1, 0.5, 0.7, 0.8, 0.9, 1.0]
    assert curve[-1]["value"] == answer["last_pass"]
    assert all(t["status"] == "passed" for t in curve[:-1])
    assert "latency against load" in again.stderr and (tmp_path / "c.svg").exists()

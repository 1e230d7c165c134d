"""A platform that runs out of space mid-run: the run ends `aborted` with the reason, and
what was measured stays readable. On a copy-on-write filesystem every overwrite needs free
space, so filling it during a write workload is what a snapshot pile-up does to a platform."""

from __future__ import annotations

import subprocess
import threading
import time

from assay.results.rundir import read_ndjson
from tests.conftest import needs_fio, needs_root
from tests.test_faults import Case

pytestmark = [needs_fio, needs_root]

SCENARIO = """\
name: fills-up
workloads:
  db:
    kind: oltp
    data_iops: 400
    log_files: 0
    read_pct: 0
    dataset: 96MiB
    load: {pacing: even}
timeline: {duration: 30s}
"""


def fill_when_running(results, mnt) -> threading.Thread:
    def fill() -> None:
        end = time.time() + 60
        while time.time() < end and not any(
                p.stat().st_size for p in results.glob("*/series.ndjson")):
            time.sleep(0.2)
        # take every free byte, then the metadata reserve goes too
        subprocess.run(["dd", "if=/dev/zero", f"of={mnt}/filler", "bs=1M", "oflag=direct"],
                       capture_output=True, check=False)

    t = threading.Thread(target=fill, daemon=True)
    t.start()
    return t


def test_running_out_of_space_aborts_with_the_reason(loopfs, run_scenario, results, tmp_path):
    _, mnt = loopfs("btrfs", "400M", ("--mixed",))
    filler = fill_when_running(results, mnt)
    outcome, run = run_scenario(SCENARIO, target_dir=mnt / "data")
    filler.join(timeout=30)
    assert outcome.status == "aborted"
    assert run["reason"].startswith("the target ran out of space"), run["reason"]
    assert "No space left on device" in run["reason"]
    assert list(read_ndjson(outcome.run_dir / "series.ndjson"))
    assert run["stats"]["db.data.write"]["ios"] > 0
    # the fault matrix's aftermath: listed, readable (show, report, export), no fio left
    Case(tmp_path, results).check(outcome.run_dir, "aborted")

"""Planning: an immutable plan whose job files are final; hosts this version cannot reach are
refused before any IO; numbers in job files in fio's plain notation."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from assay.plan import LOCAL, PREFILL_JOB, RUN_JOB, plan_text
from assay.scenario.yamlsource import ScenarioInvalid

TEXT = """\
name: p
workloads:
  db: {kind: oltp, data_iops: 400, data_files: 1, log_files: 1, dataset: 64MiB,
       load: {pacing: even}}
timeline: {warmup: 1s, duration: 5s}
"""


def test_a_workload_on_another_host_is_refused_with_its_line():
    text = TEXT.replace("dataset: 64MiB,", "dataset: 64MiB, host: db1.example,")
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(text, "remote.yaml")
    (issue,) = e.value.issues
    assert (issue.file, issue.line, issue.field) == ("remote.yaml", 3, "workloads.db.host")
    assert "db1.example" in issue.message


def test_this_machine_by_name_is_local():
    plan = plan_text(TEXT.replace("dataset: 64MiB,", "dataset: 64MiB, host: localhost,"), "l")
    assert plan.hosts == [LOCAL]


def test_the_cli_refuses_a_remote_host_before_any_io(tmp_path):
    path = tmp_path / "remote.yaml"
    path.write_text(TEXT.replace("dataset: 64MiB,", "dataset: 64MiB, host: db1.example,"))
    r = subprocess.run([sys.executable, "-m", "assay", "run", str(path)], capture_output=True,
                       text=True, env={"ASSAY_RESULTS": str(tmp_path / "results"),
                                       "PATH": "/usr/bin:/bin"}, timeout=60)
    assert r.returncode == 2
    assert f"{path}:3" in r.stderr and "db1.example" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "results").exists()  # nothing was started


def test_the_plan_is_frozen_and_its_job_files_final():
    plan = plan_text(TEXT, "p.yaml")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.duration = 10  # type: ignore[misc]
    run = plan.jobfile(LOCAL, RUN_JOB)
    # nothing run-specific: the target and O_DIRECT come from variables the runner sets
    assert "directory=${ASSAY_TARGET}" in run and "direct=${ASSAY_DIRECT}" in run
    # fixed-rate jobs log their issues (latency from the due time) already in the plan
    assert "write_iolog=" in run and "write_lat_log=" not in run
    prefill = plan.jobfile(LOCAL, PREFILL_JOB)
    assert prefill.count("[prefill.") == len(plan.files) == 2


@pytest.mark.parametrize("seconds,written", [(12 * 86400, "runtime=1036800s"),
                                             (2.5, "runtime=2500ms")])
def test_times_are_written_in_plain_notation(seconds, written):
    """fio reads `1.03681e+06s` as about one second: a 12-day run would pass in one."""
    plan = plan_text(TEXT, "p.yaml", duration=seconds, warmup=0)
    assert written in plan.jobfile().splitlines()

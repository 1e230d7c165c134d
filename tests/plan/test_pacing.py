"""A job paced under 1 IO/s holds back every status dump of fio (its seconds come that far
apart): warned about when the scenario is planned, in `assay plan` and in run.json."""

from __future__ import annotations

import functools
import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from assay.engine import Engine, RunOptions
from assay.plan import Plan, builtin_scenarios, plan_text
from assay.plan.pacing import io_rate
from assay.runners import ReplayRunner
from tests.cluster import example_hosts
from tests.conftest import assay_in_process

REPLAY = Path(__file__).parents[1] / "fixtures" / "replay"
MINE = "[global]\nbs=4k\n[steady]\nrw=randread\nrate_iops=50\n[slow]\nrw=randwrite\nrate=1k\n"


SCENARIO = "name: t\nworkloads:\n  w: {kind: fio, job: mine.fio, dataset: 64MiB}\n"


def fio_plan(tmp_path: Path, jobfile: str) -> Plan:
    (tmp_path / "mine.fio").write_text(jobfile)
    return plan_text(SCENARIO, "t.yaml", tmp_path)


def test_a_job_under_one_io_a_second_is_named_with_its_rate(tmp_path):
    (tmp_path / "mine.fio").write_text(MINE)
    (tmp_path / "t.yaml").write_text(SCENARIO)
    env = {**os.environ, "COLUMNS": "1000"}
    r = assay_in_process("plan", str(tmp_path / "t.yaml"), "--no-check", env=env)
    assert r.returncode == 0, r.stderr
    said = [ln for ln in r.stdout.splitlines() if ln.startswith("warning:")]
    assert len(said) == 1, r.stdout
    assert "workload w: fio job w.slow is paced at 0.25 IO/s, one IO every 4.0s" in said[0]
    assert "status dumps wait for every job's next IO" in said[0]
    assert "raise the rate" in said[0] and "run longer" in said[0]
    assert "w.steady" not in said[0]
    r = assay_in_process("plan", str(tmp_path / "t.yaml"), "--no-check", "--json", env=env)
    assert [w for w in json.loads(r.stdout)["warnings"] if "w.slow" in w]


def test_each_clone_of_numjobs_runs_at_the_full_rate(tmp_path):
    p = fio_plan(tmp_path, MINE.replace("rate=1k", "rate=1k\nnumjobs=8"))
    assert len(p.warnings) == 1
    assert "w.slow, each of its 8 clones, is paced at 0.25 IO/s" in p.warnings[0]


def test_a_scaled_down_workload_splits_its_rate_into_slow_jobs():
    # 10 % of 30 % of 20 IO/s in 32k writes, over 4 files: 0.15 IO/s per job (and the 32k
    # reads at 0.35)
    p = plan_text("name: t\nworkloads:\n  db: {kind: oltp, data_iops: 20, read_pct: 70, "
                  "data_files: 4, log_iops: 8, log_files: 1, dataset: 64MiB, "
                  "load: {pacing: even}}\n", "t.yaml")
    assert len(p.warnings) == 1
    assert p.warnings[0].startswith("workload db: fio job db.data.1.write.32k is paced at "
                                    "0.15 IO/s, one IO every 6.7s (and 7 more")


def test_a_fractional_rate_iops_is_no_cap_at_all_to_fio(tmp_path):
    p = fio_plan(tmp_path, MINE.replace("rate=1k", "rate_iops=0.5"))
    assert len(p.warnings) == 1
    assert "w.slow asks rate_iops=0.5" in p.warnings[0] and "no cap" in p.warnings[0]


@pytest.mark.parametrize(("options", "rate"), [
    ({"rw": "randread", "rate_iops": 3}, 3.0),
    ({"rw": "read", "rate": "64k", "bs": "256k"}, 0.25),
    ({"rw": "randrw", "rate": "8k", "bs": "4k,8k"}, 3.0),  # 2 reads and 1 write a second
    ({"rw": "randrw", "rate": "8k,", "bs": "4k"}, None),  # writes are not capped
    ({"rw": "randwrite", "rate": "8k,", "bs": "4k"}, None),
    ({"rw": "randwrite", "rate": ",6k", "bssplit": "4k/50:8k/50"}, 1.0),
    ({"rw": "randread", "rate": "1k", "bssplit": "4k/:12k/"}, 0.125),
    ({"rw": "randread"}, None),
])
def test_a_jobs_rate_is_read_as_fio_reads_it(options, rate):
    assert io_rate(options) == (pytest.approx(rate) if rate is not None else None)


@pytest.mark.parametrize("name", sorted(builtin_scenarios()))
def test_no_builtin_scenario_warns(name):
    text = builtin_scenarios()[name]
    assert plan_text(text, name, hosts=example_hosts(text)).warnings == []


def test_the_warning_is_in_the_runs_record(tmp_path):
    # the replay fixture scaled down: its 32k writes at 0.6 IO/s
    text = (REPLAY / "scenario.yaml").read_text().replace("load: {pacing: even}",
                                                          "load: {pacing: even, scale: 0.05}")
    plan = plan_text(text, str(REPLAY / "scenario.yaml"))
    assert len(plan.warnings) == 1
    out = Engine(plan, RunOptions(tmp_path / "results",
                                  runner=functools.partial(ReplayRunner, REPLAY / "steady")),
                 Console(file=io.StringIO())).execute()
    run = json.loads((out.run_dir / "run.json").read_text())
    assert plan.warnings[0] in run["warnings"]
    assert "db.data.1.write.32k is paced at 0.6 IO/s" in plan.warnings[0]

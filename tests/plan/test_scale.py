"""Planning cost is linear in jobs: a week of checkpoints (20,000 fio jobs) is planned in
seconds. The bounds are CPU seconds of this process, twice the goal (5 s) so that a loaded
machine does not fail them; the quadratic walks they catch took 50 s and 18 s."""

from __future__ import annotations

import time
from pathlib import Path

from click.testing import CliRunner

from assay.cli.plan import command
from assay.fio.jobfile import Options
from assay.plan import model, plan_text
from assay.workloads.base import Stream

BOUND_S = 10.0


def checkpoints(streams: int, every: str, duration: str) -> str:
    """A checkpoint every `every`: streams x saves x 2 (save and restore) fio jobs."""
    return f"""\
name: many-jobs
workloads:
  ckpt: {{kind: checkpoint, size: 8GiB, fraction: 0.1, streams: {streams}, every: {every}}}
timeline: {{duration: {duration}}}
thresholds: {{ckpt.save_s: "< 20s"}}
"""


def test_the_plans_table_of_20000_jobs_is_made_in_seconds(tmp_path: Path) -> None:
    # 8 streams saved every 8 minutes for 7 days: 1,260 saves, 20,160 jobs
    (tmp_path / "s.yaml").write_text(checkpoints(8, "8m", "7d"))
    t0 = time.process_time()
    r = CliRunner().invoke(command, [str(tmp_path / "s.yaml"), "--no-check"])
    spent = time.process_time() - t0
    assert r.exit_code == 0, r.output
    assert "10080 fio jobs" in r.output and "10080 jobs" in r.output
    assert spent < BOUND_S, f"{spent:.1f} s of CPU"


def test_the_prefill_looks_up_each_streams_data_pattern_once(monkeypatch) -> None:
    # each of 1,000 files' data pattern was looked up in all its stream's 10,000 jobs
    # (6.5 s of 20,000 jobs' plan): once per stream keeps it linear
    looked: list[str] = []
    every = model._write_data_options

    def counted(stream: Stream) -> Options:
        looked.append(stream.key)
        return every(stream)

    monkeypatch.setattr(model, "_write_data_options", counted)
    t0 = time.process_time()
    plan = plan_text(checkpoints(1000, "1m", "10m"), "s.yaml")
    spent = time.process_time() - t0
    assert len(plan.jobs) == 20_000
    assert plan.jobfile(name="prefill.fio").count("[prefill.") == 1000
    assert sorted(looked) == ["ckpt.restore", "ckpt.save"]
    assert spent < BOUND_S, f"{spent:.1f} s of CPU"

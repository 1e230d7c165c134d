"""The synthetic fio: the engine runs minutes of one-second dumps in a moment, each job at its
fixed rate, and the run directory compacts them as a long run would."""

from __future__ import annotations

import functools
import io

from rich.console import Console

from assay.engine import Engine, RunOptions
from assay.metrics.duetime import fio_bucket
from assay.plan.build import plan_text
from assay.results import blocklog
from assay.results.blocklog import read_rows
from assay.runners.synthetic import SyntheticRunner, read_jobs

SCENARIO = """\
name: synthetic
workloads:
  mail: {kind: exchange, mailboxes: 2000, databases: 1, dataset: 64MiB}
timeline: {warmup: 10s, duration: 50s}
"""


def test_jobs_run_at_their_fixed_rate():
    jobs = read_jobs("[a]\nrw=randread\nbs=8k\nrate_iops=100\n"
                     "[b]\nrw=read\nbs=256k\nrate=1m\n[c]\nrw=randrw\nrwmixread=70\nbs=4k\n")
    assert jobs["a"]["read"].per_second == 100 and jobs["b"]["read"].per_second == 4
    assert set(jobs["c"]) == {"read", "write"}
    assert fio_bucket(1_000_000) == fio_bucket(1_000_001) != fio_bucket(1_100_000)


def test_a_minute_of_synthetic_fio_through_the_engine(tmp_path, monkeypatch):
    monkeypatch.setattr(blocklog, "BLOCK_S", 20.0)  # seal blocks as a long run does
    plan = plan_text(SCENARIO, "synthetic.yaml")
    out = Engine(plan, RunOptions(tmp_path, runner=functools.partial(SyntheticRunner, 60)),
                 Console(file=io.StringIO())).execute()
    assert out.status == "completed", out.reason  # no thresholds: nothing graded
    for name, s in out.stats.items():
        if s.target_iops:
            assert abs(s.iops - s.target_iops) <= 0.02 * s.target_iops + 1, name
            assert 49 <= s.seconds <= 51, name
    d = out.run_dir
    assert (d / "samples.blocks").stat().st_size > 0
    rows = list(read_rows(d, "series"))
    assert len(rows) == 60 * len(plan.components)
    assert [r["t"] for r in rows[:: len(plan.components)]] == [float(t) for t in range(1, 61)]

"""`annotate`: a marker whose text is the step's recorded output."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.actions import annotate
from assay.plan import plan_text
from assay.platforms import driver
from assay.results.rundir import RunDir, read_ndjson
from assay.timeline import TimelineRunner
from tests.actions.support import context, local_platform

SCENARIO = """name: t
workloads:
  db: {kind: oltp, data_iops: 100, dataset: 16MiB}
timeline:
  warmup: 0s
  duration: 30s
  steps:
    - {name: warm, action: annotate, at: 0.1s, text: "cache warm — tenant B starts"}
    - {name: quiet, action: annotate, at: 0.1s, text: hidden, annotate: false}
"""


def test_returns_its_text_verbatim_and_needs_nothing(tmp_path: Path) -> None:
    p = annotate.Params(text="  backup window opens ✓ ")
    ctx = context(local_platform(tmp_path), p)
    assert annotate.run(p, ctx) == "  backup window opens ✓ "
    assert ctx.details == {}
    assert annotate.requires(p) == set()


def test_text_is_required() -> None:
    with pytest.raises(ValidationError, match="text"):
        annotate.Params(text="")
    with pytest.raises(ValidationError, match="text"):
        annotate.Params.model_validate({"action": "annotate"})


def test_the_step_event_records_the_text(tmp_path: Path) -> None:
    plan = plan_text(SCENARIO, "t.yaml")
    rd = RunDir.create(tmp_path / "results", "t")
    platform = driver("local")(plan.scenario.target)
    platform.directory = tmp_path
    tl = TimelineRunner(plan, platform, rd)
    t0 = time.monotonic()
    tl.start(t0)
    try:
        while (t := time.monotonic() - t0) < 0.5:
            tl.tick(t)
            time.sleep(0.02)
    finally:
        tl.finish()
        rd.close()
    steps = {e["name"]: e for e in read_ndjson(rd.path / "events.ndjson") if e["kind"] == "step"}
    assert steps["warm"]["output"] == "cache warm — tenant B starts"
    assert steps["warm"]["outcome"] == "ok" and steps["warm"]["annotate"] is True
    assert steps["quiet"]["annotate"] is False and steps["quiet"]["output"] == "hidden"

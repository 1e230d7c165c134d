"""The engine writes report.html at the end of a run, and a report failure never loses a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import assay.engine
from assay.report.html import write_report
from tests.conftest import needs_fio

SCENARIO = """
name: report-guard
workloads:
  db: {kind: oltp, preset: standard, dataset: 64MiB}
timeline: {warmup: 1s, duration: 2s}
"""


@needs_fio
def test_a_failing_report_is_a_warning_and_the_run_is_kept(
        run_scenario: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(run_dir: Path, out: Path | None = None) -> Path:
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr(assay.engine, "write_report", broken)
    outcome, run = run_scenario(SCENARIO)
    assert outcome.status == "completed" and run["status"] == "completed"  # no thresholds
    assert not (outcome.run_dir / "report.html").exists()
    assert (outcome.run_dir / "series.ndjson").stat().st_size > 0
    # and the report is rebuilt later from the stored files
    assert write_report(outcome.run_dir).stat().st_size > 10_000

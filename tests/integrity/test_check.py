"""Integrity mode checked before any IO: who verifies, and what is refused with file:line."""

from __future__ import annotations

import pytest

from assay.integrity.check import describe, writing
from assay.integrity.session import settings
from assay.plan import plan_text
from assay.scenario.yamlsource import ScenarioInvalid
from assay.thresholds.grammar import ThresholdError, parse

BASE = """name: t
{top}workloads:
  db: {{kind: oltp, data_iops: 100, dataset: 16MiB{db}}}
  scan: {{kind: micro, corners: [randread], phase: 5s, dataset: 16MiB{scan}}}
timeline:
  duration: 5s
  steps: [{steps}]
thresholds: {{{thresholds}}}
"""


def plan(top: str = "", db: str = "", scan: str = "", steps: str = "",
         thresholds: str = "") -> list[str]:
    """The workloads in integrity mode, or the problems found (as text)."""
    text = BASE.format(top=top, db=db, scan=scan, steps=steps, thresholds=thresholds)
    try:
        p = plan_text(text, "s.yaml")
    except ScenarioInvalid as e:
        return [str(i) for i in e.issues]
    return settings(p.resolved, writing(p.streams))[1]


def test_integrity_on_verifies_every_writing_workload_and_verify_false_opts_out() -> None:
    assert plan() == []
    assert plan(top="integrity: on\n") == ["db"]  # scan only reads
    assert plan(top="integrity: on\n", db=", verify: false") == []
    assert plan(db=", verify: true") == ["db"]
    assert plan(top="integrity: {rate: 50, size: 8MiB}\n") == ["db"]


def test_what_cannot_be_verified_is_refused_before_any_io() -> None:
    [problem] = plan(scan=", verify: true")
    assert problem.startswith("s.yaml:4") and "workloads.scan.verify" in problem and \
        "does not write" in problem
    [problem] = plan(steps="{action: verify, at: 1s}")
    assert "timeline.steps[0].action" in problem and "needs integrity mode" in problem
    [problem] = plan(thresholds="integrity.corrupt: '== 0'")
    assert "needs integrity mode" in problem
    [problem] = plan(top="integrity: on\n", thresholds="integrity.scan.lost: '== 0'")
    assert "'scan' is not in integrity mode" in problem
    [problem] = plan(top="integrity: {block: 1000}\n")
    assert "integrity" in problem and "multiple of 512" in problem


def test_integrity_thresholds_are_counts_of_the_four_problems() -> None:
    t = parse("integrity.db.lost == 0")
    assert t.integrity and t.selector == ("integrity", "db") and t.metric == "lost"
    for bad in ("integrity.ok == 0", "integrity.corrupt < 2ms", "integrity.corrupt == 0 after",
                "integrity.a.b.corrupt == 0"):
        with pytest.raises(ThresholdError):
            parse(bad)


def test_the_plan_says_what_integrity_mode_will_write() -> None:
    text = BASE.format(top="integrity: {size: 8MiB, rate: 50}\n", db="", scan="", steps="",
                       thresholds="")
    p = plan_text(text, "s.yaml")
    assert describe(p.resolved, p.streams) == (
        "db: 8 MiB of 8 KiB self-checking blocks each at 50 writes/s, journaled in the run "
        "directory; 6 data files written with fio's crc32c verify headers, checksummed by every "
        "pass; verified at the end")
    p = plan_text(BASE.format(top="", db="", scan="", steps="", thresholds=""), "s.yaml")
    assert describe(p.resolved, p.streams) == "off"

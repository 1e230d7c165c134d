"""Jetstress' test types in the exchange kind, the automatic threshold set, and a real
DatabaseBackup run."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from assay.engine import Engine, RunOptions
from assay.plan import plan_text
from tests.conftest import needs_fio

TEXT = """\
name: j
workloads:
  mail: {{kind: exchange, mailboxes: 200, databases: 2, dataset: 128MiB, test: {test}}}
timeline: {{duration: {duration}}}
thresholds: {preset}
"""


def jobs(plan) -> dict[str, dict]:
    return {j.name: j.options for s in plan.streams for j in s.jobs}


def test_backup_reads_each_database_sequentially_and_grades_each():
    p = plan_text(TEXT.format(test="backup", duration="10s",
                              preset="{mail.db.read.mbps: '>= 1'}"), "b.yaml")
    assert {c.name for c in p.components} == {"mail.db.read", "mail.db1.read", "mail.db2.read"}
    # each database's component is a view of the pooled one's IOs: counted once
    assert {c.name for c in p.components if not c.view} == {"mail.db.read"}
    opts = jobs(p)
    assert len(opts) == 2 and all(o["rw"] == "read" and o["bs"] == "64k" for o in opts.values())
    assert all(c.target_iops is None for c in p.components)  # as fast as it goes
    assert {o["filename"] for o in opts.values()} == \
        {"mail.db.1.edb", "mail.db.2.edb"}  # the databases, not the logs
    assert any("DatabaseBackup" in n for n in p.notes)


def test_soft_recovery_replays_logs_into_the_databases():
    p = plan_text(TEXT.format(test="soft_recovery", duration="10s",
                              preset="{mail.log.read.mbps: '>= 1'}"), "s.yaml")
    names = {c.name for c in p.components}
    assert {"mail.log1.read", "mail.log2.read", "mail.db1.read", "mail.db1.write"} <= names
    opts = jobs(p)
    logs = [o for o in opts.values() if str(o["filename"]).endswith(".log")]
    assert logs and all(o["rw"] == "read" for o in logs)
    assert any(o["rw"] == "randrw" for o in opts.values())
    assert any("500" in n and "replay" in n for n in p.notes)


def test_jetstress_picks_strict_or_lenient_by_the_runs_length():
    """Jetstress treats a performance run longer than 6 hours as a stress test."""
    short = plan_text(TEXT.format(test="performance", duration="2h",
                                  preset="{mail: jetstress}"), "a")
    long_ = plan_text(TEXT.format(test="stress", duration="7h", preset="{mail: jetstress}"), "b")
    assert {t.source for t in short.thresholds} == {"preset jetstress-strict"}
    assert {t.source for t in long_.thresholds} == {"preset jetstress-lenient"}
    assert any("200ms" in t.text for t in long_.thresholds)
    assert not any("200ms" in t.text for t in short.thresholds)


@needs_fio
def test_a_real_backup_run_reports_mb_per_database(tmp_path):
    plan = plan_text(TEXT.format(test="backup", duration="3s",
                                 preset="{mail.db.read.mbps: '>= 1'}"), "b.yaml")
    plan.scenario.target.path = str(tmp_path / "t")
    out = Engine(plan, RunOptions(Path(tmp_path / "results")),
                 Console(file=io.StringIO())).execute()
    assert out.status == "passed", out.reason
    per_db = [out.stats[f"mail.db{i}.read"].mbps for i in (1, 2)]
    assert all(mb > 1 for mb in per_db)
    # the pooled figure is the databases' sum: each reader read its own database
    assert abs(out.stats["mail.db.read"].mbps - sum(per_db)) < 0.02 * sum(per_db)

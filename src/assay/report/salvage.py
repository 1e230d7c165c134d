"""A run whose engine never wrote its end (killed, or stopped by a full results disk) still
holds every second it measured. Readers show those seconds: the statistics up to where the run
got, its measured time, and its status (`crashed at 12s`), never a verdict.
"""

from __future__ import annotations

from pathlib import Path

from assay.metrics.coverage import coverage
from assay.metrics.summary import ComponentInfo, aggregate_all
from assay.results.blockread import last_second, read_rows
from assay.results.liveness import effective_status
from assay.results.record import RunRecord
from assay.results.recordparts import ComponentStats


def measured(run_dir: Path, record: RunRecord) -> RunRecord:
    """`record` with what its stored seconds say, when the run has not written its end."""
    if record.status != "running" or record.verdict is not None:
        return record
    infos = [ComponentInfo(name, c.target_iops, c.poisson, c.start_s, c.end_s,
                           c.transactional, c.jobs, view=c.view)
             for name, c in record.components.items()]
    start = record.plan.warmup_s
    end = start + record.plan.duration_s
    stats = aggregate_all(infos, read_rows(run_dir, "samples"), start, end)
    got = coverage(infos, read_rows(run_dir, "samples"), start, end, ended_early=True)
    salvaged = record.model_copy(deep=True)
    # assignment marks the fields as set: run.json's readers and exports show them
    salvaged.stats = {k: ComponentStats.model_validate(v.to_json()) for k, v in stats.items()
                      if v.seconds > 0}
    salvaged.measured_window_s = (start, start + got.measured_s)
    salvaged.measured_s = round(got.measured_s, 3)
    salvaged.graded_s = round(got.graded_s, 3)
    return salvaged


def status_label(run_dir: Path, record: RunRecord) -> str:
    """The status as readers say it: `crashed at 12s` for a run whose engine is gone."""
    status = effective_status(record.stored(), run_dir)
    if status == "crashed":
        last = last_second(run_dir)
        return f"crashed at {last:.0f}s" if last is not None else "crashed before any second"
    return status


def shout(label: str) -> str:
    """`crashed at 12s` as a summary's first word: `CRASHED at 12s`."""
    word, _, rest = label.partition(" ")
    return f"{word.upper()} {rest}".strip()


def has_data(record: RunRecord) -> bool:
    """Did the run measure anything in its window (a baseline must)?"""
    return any(s.seconds > 0 for s in record.stats.values())

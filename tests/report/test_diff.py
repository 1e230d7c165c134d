"""Facts flattened into key paths and the rows that differ between runs."""

from __future__ import annotations

from pathlib import Path

from assay.report.diff import differences, facts, flatten, parse_jobfile
from assay.results.rundir import read_record

RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"


def test_flatten_nested_values() -> None:
    assert flatten({"a": {"b": [1, "x"], "c": None, "d": {}}}) == \
        {"a.b[0]": "1", "a.b[1]": "x", "a.c": "-", "a.d": "{}"}


def test_jobfile_options_with_the_target_directory_normalised() -> None:
    text = "; comment\n[global]\ndirect=1\ndirectory=/mnt/x\ntime_based\n[j1]\nbs=4k\n"
    assert parse_jobfile(text, "/mnt/x") == {"global.direct": "1", "global.directory": "<target>",
                                             "global.time_based": "(set)", "j1.bs": "4k"}


def test_differences_list_only_what_changed() -> None:
    rows = differences([{"fs": "xfs", "qd": "16"}, {"fs": "btrfs", "qd": "16", "comp": "zstd"}])
    assert rows == [("fs", ["xfs", "btrfs"]), ("comp", ["(absent)", "zstd"])]


def test_facts_of_a_stored_run_cover_target_environment_plan_and_jobs() -> None:
    f = facts(read_record(RUN), RUN)
    assert f["target.fstype"] == "ext4"
    assert f["environment.fio_version"] == "fio-3.33"
    assert f["plan.workloads.mail.dataset"] == "256MiB"
    assert f["fio.local.mail.db.1.read.32k.iodepth"] == "16"
    assert f["fio.local.global.directory"] == "<target>"
    assert "target.free_bytes" not in f  # changes every run, says nothing

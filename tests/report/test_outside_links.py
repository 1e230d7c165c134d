"""A report shows only what its run directory holds: a scenario.yaml, a job file, a host
directory or a data file that is a symbolic link is not read, whatever it points at; a file
shown as written (scenario.yaml, run.fio) that is hard-linked is not embedded either, while
hard-linked data (a `cp -al` backup of a results directory) still renders."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.report.diff import facts
from assay.report.html import build_report, write_report
from assay.results.record import RecordError
from assay.results.rundir import read_record

RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"
SECRET = "SECRET-OUTSIDE-THE-RUN"


def embedded(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="assay-data">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    """Files outside any run directory that a link inside one could point at."""
    out = tmp_path / "elsewhere"
    (out / "host").mkdir(parents=True)
    (out / "secret.yaml").write_text(f"password: {SECRET}\n")
    (out / "host" / "run.fio").write_text(f"[global]\nsecret={SECRET}\n")
    (out / "events.ndjson").write_text(json.dumps(
        {"kind": "step", "name": SECRET, "t_start": 1.0, "t_end": 2.0}) + "\n")
    (out / "platform.ndjson").write_text(json.dumps(
        {"t": 1.0, "health": SECRET, "clean": True}) + "\n")
    return out


def linked_run(tmp_path: Path, secrets: Path, hard: bool = False) -> Path:
    """A copy of the fixture run whose shown files lead outside it: symbolic links, or with
    `hard` hard links to the same files."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    for name, target in (("scenario.yaml", secrets / "secret.yaml"),
                         ("hosts/local/run.fio", secrets / "host" / "run.fio")):
        (run / name).unlink()
        if hard:
            os.link(target, run / name)
        else:
            (run / name).symlink_to(target)
    (run / "hosts" / "evil").symlink_to(secrets / "host")  # a linked host directory
    (run / "events.ndjson").unlink()
    (run / "events.ndjson").symlink_to(secrets / "events.ndjson")
    (run / "platform.ndjson").symlink_to(secrets / "platform.ndjson")
    return run


@pytest.mark.parametrize("hard", [False, True], ids=["symlinks", "hard-links"])
def test_linked_files_are_not_embedded(tmp_path: Path, secrets: Path, hard: bool) -> None:
    run = linked_run(tmp_path, secrets, hard)
    html = build_report(run)
    assert SECRET not in html
    data = embedded(html)
    assert data["scenario_yaml"] == "" and data["job_files"] == {}
    assert data["steps"] == [] and data["platform"] is None
    assert data["stats"]  # the run itself is still drawn
    written = write_report(run).read_text()
    assert SECRET not in written


def test_assay_report_does_not_embed_a_linked_scenario(tmp_path: Path, secrets: Path) -> None:
    run = linked_run(tmp_path, secrets)
    r = CliRunner().invoke(cli, ["report", str(run)])
    assert r.exit_code == 0, r.output
    assert SECRET not in (run / "report.html").read_text()


def test_a_regular_copy_is_embedded(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    data = embedded(build_report(run))
    assert data["scenario_yaml"] == (RUN / "scenario.yaml").read_text()
    assert list(data["job_files"]) == ["local"] and data["steps"]


def test_a_hard_linked_backup_still_renders_its_data(tmp_path: Path) -> None:
    """`cp -al results backup`: every file has two links; the data is read, the files shown
    as written are not (a hard link cannot be told from one to a file elsewhere)."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)  # a copy: linking the fixture itself would change its link
    backup = tmp_path / "backup"  # count under a test that reads it beside this one
    shutil.copytree(run, backup, copy_function=os.link)
    data = embedded(build_report(backup))
    assert data["stats"] and data["series"] and data["steps"] and data["latency"]["curves"]
    assert data["scenario_yaml"] == "" and data["job_files"] == {}


def test_the_config_diff_reads_no_linked_job_file(tmp_path: Path, secrets: Path) -> None:
    run = linked_run(tmp_path, secrets)
    got = facts(read_record(run), run)
    assert not any(SECRET in k or SECRET in v for k, v in got.items())
    assert not any(k.startswith("fio.") for k in got)


def test_a_linked_run_json_is_not_read(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (tmp_path / "record.json").write_bytes((run / "run.json").read_bytes())
    (run / "run.json").unlink()
    (run / "run.json").symlink_to(tmp_path / "record.json")
    with pytest.raises(RecordError, match="not read"):
        build_report(run)

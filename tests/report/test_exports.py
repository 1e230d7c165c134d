"""Exports of a recorded run directory against golden files (tests/fixtures/golden/).

Set ASSAY_UPDATE_GOLDEN=1 to rewrite the goldens after an intended change, then review the diff.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.report.exports import names
from assay.report.jsondoc import summary_document
from assay.results.rundir import read_json, read_record

FIXTURES = Path(__file__).parents[1] / "fixtures"
RUN = FIXTURES / "runs" / "exchange-fixture"
GOLDEN = FIXTURES / "golden"
FILES = {"json": "exchange-fixture.json", "csv": "exchange-fixture.csv",
         "junit": "exchange-fixture.junit.xml", "openmetrics": "exchange-fixture.om"}


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(RUN, dst)
    return dst


def export(run: Path, fmt: str, out: Path) -> str:
    result = CliRunner().invoke(cli, ["export", str(run), "--format", fmt, "-o", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    if fmt == "json":  # the run directory's location is the one machine-specific field
        doc = json.loads(text)
        doc["run_dir"] = "<run>"
        text = json.dumps(doc, indent=2) + "\n"
    return text


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_export_matches_golden(fmt: str, run_copy: Path, tmp_path: Path) -> None:
    text = export(run_copy, fmt, tmp_path / f"out.{fmt}")
    golden = GOLDEN / FILES[fmt]
    if os.environ.get("ASSAY_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_every_registered_export_has_a_golden() -> None:
    assert set(names()) == set(FILES)


def test_json_is_the_run_summary_plus_series(run_copy: Path, tmp_path: Path) -> None:
    doc = json.loads(export(run_copy, "json", tmp_path / "x.json"))
    summary = summary_document(read_record(run_copy), run_copy)
    summary["run_dir"] = "<run>"
    series = doc.pop("series")
    assert doc == summary
    lines = (run_copy / "series.ndjson").read_text().splitlines()
    assert len(series) == len(lines) == 48
    assert {r["c"] for r in series} == set(read_json(run_copy / "run.json")["stats"])


def test_csv_has_one_row_per_second_and_component(run_copy: Path, tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(export(run_copy, "csv", tmp_path / "x.csv"))))
    assert len(rows) == 48
    assert {r["component"] for r in rows} == {"mail.db.read", "mail.db.write",
                                              "mail.log.write", "mail.bdm.read"}
    assert all(float(r["iops"]) >= 0 for r in rows)
    assert {r["phase"] for r in rows} == {"warmup", "run"}


def test_junit_has_one_case_per_threshold_and_the_failure(run_copy: Path, tmp_path: Path) -> None:
    root = ET.fromstring(export(run_copy, "junit", tmp_path / "x.xml"))
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    run = read_json(run_copy / "run.json")
    assert len(cases) == len(run["thresholds"]) + 1  # + "run completed"
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["mail.log.write.lat_p99 < 200us"]
    failure = failed[0].find("failure")
    assert failure is not None
    assert failure.get("message") == "observed 465us, bound 200us"
    assert suite.get("failures") == "1" and suite.get("errors") == "0"


def test_junit_marks_an_aborted_run_as_an_error(run_copy: Path, tmp_path: Path) -> None:
    run = read_json(run_copy / "run.json")
    run.update(status="aborted", reason="fio exited with status 1: disk full")
    (run_copy / "run.json").write_text(json.dumps(run), encoding="utf-8")
    root = ET.fromstring(export(run_copy, "junit", tmp_path / "x.xml"))
    error = root.find("testsuite/testcase/error")
    assert error is not None and "disk full" in (error.get("message") or "")


def test_export_to_stdout_and_unknown_format(run_copy: Path) -> None:
    ok = CliRunner().invoke(cli, ["export", str(run_copy), "--format", "csv"])
    assert ok.exit_code == 0 and ok.output.startswith("t,dt,component,phase")
    bad = CliRunner().invoke(cli, ["export", str(run_copy), "--format", "xlsx"])
    assert bad.exit_code != 0 and "xlsx" in bad.output


def test_an_installed_exporter_is_found_and_a_broken_one_named(tmp_path, monkeypatch):
    from assay.plugins import PluginError
    from assay.report import exports
    from assay.results.rundir import read_record
    from tests.plugin_dist import install

    install(tmp_path / "good", monkeypatch, {"assay.exporters": {"lines": "lines_export"}},
            {"lines_export.py": "SUFFIX = 'txt'\n"
                                "def render(run_dir, record):\n"
                                "    return f'{record.status} {len(record.thresholds)}'\n"})
    assert "lines" in exports.names()
    record = read_record(RUN)
    assert exports.render("lines", RUN, record) == f"{record.status} {len(record.thresholds)}"
    assert exports.suffix("lines") == "txt"
    install(tmp_path / "bad", monkeypatch, {"assay.exporters": {"nosuffix": "nosuffix_export"}},
            {"nosuffix_export.py": "def render(run_dir, record):\n    return ''\n"},
            name="assay-bad")
    with pytest.raises(PluginError, match="nosuffix.*SUFFIX"):
        exports.names()

"""A run whose engine never wrote its end (SIGKILL, a full results disk) keeps its seconds:
show, report and compare read what it measured (`crashed at Ns`), never "RUNNING, measured
0s"; compare refuses a run that measured nothing; no temporary file is left behind."""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from assay.cli import cli
from assay.engine import Engine, RunOptions
from assay.exitcodes import UserError
from assay.plan import load
from assay.results.rundir import RunDir
from assay.runners import ReplayRunner

REPLAY = Path(__file__).parents[1] / "fixtures" / "replay"
END_KEYS = ("stats", "thresholds", "verdict", "measured_window_s", "measured_s", "graded_s",
            "ended", "elapsed_s", "reason", "hosts", "phases", "phase_totals", "recovery")


def crashed_run(tmp_path: Path, case: str = "steady") -> Path:
    """A replayed run whose run.json is put back as the engine left it at the start: status
    running, the pid of a process that is gone (the engine was killed)."""
    runner = functools.partial(ReplayRunner, REPLAY / case)
    out = Engine(load(str(REPLAY / "scenario.yaml")), RunOptions(tmp_path / "results",
                                                                 runner=runner),
                 Console(file=io.StringIO())).execute()
    record = json.loads((out.run_dir / "run.json").read_text())
    for k in END_KEYS:
        record.pop(k, None)
    record.update(status="running", pid=2**22 + 7)  # above any pid_max: no such process
    (out.run_dir / "run.json").write_text(json.dumps(record))
    (out.run_dir / "report.html").unlink()
    return out.run_dir


def invoke(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return r.exit_code, r.output


def test_a_crashed_run_shows_what_it_measured(tmp_path):
    run_dir = crashed_run(tmp_path)
    code, text = invoke("show", str(run_dir))
    assert code == 0 and "CRASHED at 8s" in text and "RUNNING" not in text, text
    assert "measured 6s" in text and "measured 0s" not in text
    assert "data.read" in text and "(100%)" in text  # the workload table, at its rate
    doc = json.loads(invoke("show", str(run_dir), "--json")[1])
    assert doc["status"] == "crashed" and doc["verdict"] == "CRASHED at 8s"
    read = doc["workloads"]["db"]["components"]["data.read"]
    assert read["achieved_iops"] == pytest.approx(280, rel=0.05) and read["seconds"] > 5
    assert doc["measured_s"] == pytest.approx(6.0, abs=0.1)
    assert doc["thresholds"] == []  # a crash grades nothing
    code, _ = invoke("report", str(run_dir))
    html = (run_dir / "report.html").read_text()
    assert code == 0 and '"headline":"CRASHED at 8s"' in html and '"data.read"' not in html
    assert '"db.data.read":{"component":"db.data.read"' in html.replace(" ", "")


def test_compare_reads_a_crashed_baseline_and_refuses_one_with_no_data(tmp_path):
    crashed = crashed_run(tmp_path / "a")
    other = crashed_run(tmp_path / "b")
    code, text = invoke("compare", str(crashed), str(other), "--json", "-o",
                        str(tmp_path / "c.html"))
    assert code == 0, text
    deltas = json.loads(text)["deltas"]
    assert any(d["values"][0] for d in deltas)  # the baseline's figures are there
    empty = crashed_run(tmp_path / "c")
    for stream in ("samples", "series"):
        for f in empty.glob(f"{stream}.*"):
            f.unlink()
    r = CliRunner().invoke(cli, ["compare", str(empty), str(other), "-o",
                                 str(tmp_path / "d.html")])
    assert isinstance(r.exception, UserError) and r.exception.code == 2  # exit 2
    assert "measured no second" in str(r.exception) and "against" in str(r.exception)


def test_a_full_disk_leaves_no_temporary_file(tmp_path, monkeypatch):
    rd = RunDir(tmp_path)
    real = Path.replace

    def full(self, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "replace", full)
    with pytest.raises(OSError):
        rd.write_json("x.json", {"a": 1})
    monkeypatch.setattr(Path, "replace", real)
    assert [p.name for p in tmp_path.iterdir()] == []

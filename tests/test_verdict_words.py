"""What a run says it proved: a run with no thresholds is COMPLETED (nothing graded), never
PASSED; an incomplete run grades nothing. The same on every surface: the summary, --json,
JUnit, the catalogue (`assay runs`) and the HTML report."""

from __future__ import annotations

import functools
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from assay.cli import cli
from assay.engine import Engine, Outcome, RunOptions
from assay.exitcodes import UserError
from assay.hosts import inventory
from assay.plan import load, plan_text
from assay.runners import ReplayRunner

REPLAY = Path(__file__).parent / "fixtures" / "replay"


def replay(case: str, scenario: Path, results: Path) -> Outcome:
    runner = functools.partial(ReplayRunner, REPLAY / case)
    return Engine(load(str(scenario)), RunOptions(results, runner=runner),
                  Console(file=io.StringIO())).execute()


def ungraded_scenario(tmp_path: Path) -> Path:
    text = (REPLAY / "scenario.yaml").read_text()
    path = tmp_path / "nothing.yaml"
    path.write_text(text[:text.index("thresholds:")])
    return path


def invoke(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return r.exit_code, r.output


def test_no_thresholds_is_completed_nothing_graded_everywhere(tmp_path):
    results = tmp_path / "results"
    out = replay("steady", ungraded_scenario(tmp_path), results)
    assert out.status == "completed" and int(out.exit_code) == 0
    run_id = out.run_dir.name
    code, text = invoke("show", str(out.run_dir))
    assert code == 0 and "COMPLETED: nothing graded" in text and "PASSED" not in text
    code, text = invoke("show", str(out.run_dir), "--json")
    doc = json.loads(text)
    assert doc["status"] == "completed" and doc["verdict"].startswith("COMPLETED: nothing graded")
    code, _ = invoke("export", str(out.run_dir), "--format", "junit", "-o",
                     str(tmp_path / "j.xml"))
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert code == 0 and suite is not None
    assert suite.get("skipped") == "1" and suite.get("failures") == "0"
    assert suite.find("testcase[@name='thresholds']/skipped") is not None
    code, text = invoke("runs", "--json", "--results", str(results))
    row = next(r for r in json.loads(text) if r["id"] == run_id)
    assert row["status"] == "completed"
    code, text = invoke("runs", "--results", str(results))
    assert "nothing graded" in text and "0 ok / 0 failed" not in text
    html = (out.run_dir / "report.html").read_text()
    assert '"headline":"COMPLETED: nothing graded"' in html


def test_an_incomplete_run_is_not_graded_everywhere(tmp_path):
    results = tmp_path / "results"
    out = replay("late", REPLAY / "late" / "scenario.yaml", results)
    assert out.status == "incomplete"
    code, text = invoke("show", str(out.run_dir))
    assert "INCOMPLETE: not graded" in text and "not graded" in text and "✓" not in text
    assert "(graded 5." in text or "(graded 4." in text
    doc = json.loads(invoke("show", str(out.run_dir), "--json")[1])
    assert doc["status"] == "incomplete" and doc["graded_s"] < 0.95 * doc["measured_s"]
    assert not any(t["passed"] for t in doc["thresholds"])
    invoke("export", str(out.run_dir), "--format", "junit", "-o", str(tmp_path / "j.xml"))
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1" and suite.get("failures") == "0"
    assert int(suite.get("skipped") or 0) == len(doc["thresholds"])
    code, text = invoke("runs", "--results", str(results))
    assert "incomplete" in text and "not graded" in text


def test_a_search_without_thresholds_is_refused_before_any_trial(tmp_path):
    """Every trial would end `completed` (nothing graded): there is nothing to bisect on."""
    r = CliRunner().invoke(cli, ["search", str(ungraded_scenario(tmp_path)), "--vary",
                                 "db.data_iops", "--from", "10", "--to", "100", "--results",
                                 str(tmp_path / "results")])
    assert isinstance(r.exception, UserError) and r.exception.code == 2
    assert "declares none" in str(r.exception)
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("run.json"))


def test_a_cluster_run_with_no_thresholds_is_completed_not_passed(tmp_path):
    """On replayed hosts too: a cluster section with nothing graded in it is no pass (it
    said 'PASSED (0 thresholds passed, 0 failed)', then 'nothing was graded')."""
    text = ungraded_scenario(tmp_path).read_text()
    lines = []
    for i, n in enumerate(("n1", "n2"), 1):
        (tmp_path / n).mkdir()
        lines.append(f"{n} ansible_host=192.0.2.{i} assay_path={tmp_path / n}")
    hosts = inventory.parse("\n".join(lines) + "\n", "inventory.ini")
    plan = plan_text(text, str(REPLAY / "scenario.yaml"), hosts=hosts)
    out = Engine(plan, RunOptions(tmp_path / "results", runner=lambda host, work: ReplayRunner(
        REPLAY / "steady", host, work)), Console(file=io.StringIO())).execute()
    run = json.loads((out.run_dir / "run.json").read_text())
    assert set(run["cluster"]["graded"]) == {"n1", "n2"}  # a cluster run, both hosts measured
    assert out.status == run["status"] == "completed" and int(out.exit_code) == 0
    code, text = invoke("show", str(out.run_dir))
    assert "COMPLETED: nothing graded" in text and "PASSED" not in text

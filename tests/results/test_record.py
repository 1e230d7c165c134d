"""The typed run record: old records open, a mid-run record opens, a record round-trips, and a
broken one says what is wrong instead of raising a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.metrics.phases import analyse
from assay.metrics.summary import ComponentInfo, aggregate
from assay.results.record import SCHEMA_VERSION, RecordError, RunRecord, parse_record
from assay.results.rundir import RunDir, read_record
from assay.search.sweep import _stamp_runs
from assay.thresholds.evaluate import evaluate, expand
from tests.conftest import assay_in_process

RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"
PREPARE_KEYS = ("id", "status", "started", "scenario", "plan", "components", "target",
                "environment", "parent", "intended_latency")  # what the engine writes first


def stored() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RUN / "run.json").read_text(encoding="utf-8"))
    return data


def copy_run(tmp_path: Path, data: dict[str, Any] | None = None) -> Path:
    d = tmp_path / "20261122-110408_exchange-fixture_cd29a8"
    shutil.copytree(RUN, d)
    if data is not None:
        (d / "run.json").write_text(json.dumps(data), encoding="utf-8")
    return d


def test_the_run_stored_by_the_previous_version_opens() -> None:
    run = read_record(RUN)
    assert run.schema_version == 1 and run.status == "failed"
    assert run.scenario.name == "exchange-fixture"
    assert run.stats["mail.db.read"].lat_p99_ms == pytest.approx(0.2284)
    assert run.thresholds[-1].expr == "mail.log.write.lat_p99 < 200us"
    assert run.verdict is not None and (run.verdict.passed, run.verdict.failed) == (6, 1)
    assert run.target.backing.device == "/dev/vda"
    assert run.components["mail.db.read"].jobs == 1  # not recorded then: the default
    assert run.measured_window() == (3.0, 11.0)


def test_a_record_without_schema_version_reads_as_version_1() -> None:
    data = stored()
    del data["schema_version"]
    assert parse_record(data).schema_version == 1


def test_a_record_written_mid_run_opens(tmp_path: Path) -> None:
    data = {k: v for k, v in stored().items() if k in PREPARE_KEYS}
    data["status"] = "running"
    run = read_record(copy_run(tmp_path, data))
    assert run.status == "running" and run.stats == {} and run.verdict is None
    assert run.measured_window() == (3.0, 11.0)  # from the plan until the run ends


def test_a_record_round_trips(tmp_path: Path) -> None:
    d = copy_run(tmp_path)
    run = read_record(d)
    RunDir(d).write_record(run)
    written = json.loads((d / "run.json").read_text(encoding="utf-8"))
    assert written == {**stored(), "schema_version": SCHEMA_VERSION}  # no invented defaults
    assert next(iter(written)) == "schema_version"
    assert read_record(d) == run.model_copy(update={"schema_version": SCHEMA_VERSION})
    assert [p.name for p in d.glob(".*")] == []  # the temporary file was renamed


def test_unknown_keys_of_a_newer_version_are_kept(tmp_path: Path) -> None:
    data = stored()
    data["schema_version"] = 9
    data["hosts_detail"] = {"a": 1}
    data["stats"]["mail.db.read"]["lat_p9999_ms"] = 0.9
    d = copy_run(tmp_path, data)
    run = read_record(d)
    assert run.model_extra == {"hosts_detail": {"a": 1}}
    RunDir(d).write_record(run)
    again = json.loads((d / "run.json").read_text(encoding="utf-8"))
    assert again["hosts_detail"] == {"a": 1}
    assert again["stats"]["mail.db.read"]["lat_p9999_ms"] == 0.9


def test_what_the_producers_write_validates() -> None:
    """Stats.to_json, Result.to_json and PhaseReport.to_json as the engine stores them."""
    info = ComponentInfo("db.data.read", target_iops=100.0)
    samples = [{"t": float(t), "dt": 1.0, "c": info.name, "ios": 100, "bytes": 409600,
                "lat_sum_ns": 1e8, "lat_max_ns": 2e6, "behind_s": 0.0,
                "bins": {"1000000": 100}} for t in range(1, 21)]
    events = [{"kind": "step", "name": "snap", "action": "snapshot", "n": 1, "t_start": 8.2,
               "t_end": 8.6, "outcome": "ok", "output": "", "annotate": True, "extra": "x"}]
    stats = {info.name: aggregate(info, samples, 2.0, 20.0)}
    report = analyse([info], samples, events, 2.0, 20.0)
    results = evaluate(expand(["db.data.read.lat_p99 < 5ms during",
                               "db.data.read.iops >= 95% target"]), [info], stats, report)
    data = {**{k: v for k, v in stored().items() if k in PREPARE_KEYS}, "events": events,
            **report.to_json(), "stats": {k: v.to_json() for k, v in stats.items()},
            "thresholds": [r.to_json() for r in results], "status": "passed"}
    run = parse_record(json.loads(json.dumps(data)))
    assert run.stats[info.name].iops == pytest.approx(100.0)
    assert [p.name for p in run.phases] == ["before", "during", "after"]
    assert run.phase_totals["during snap"].stats[info.name].ios > 0
    assert run.recovery[0].components[info.name] is not None
    assert run.thresholds and all(t.passed for t in run.thresholds)
    assert run.events[0].model_extra == {"extra": "x"}


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d.pop("status"), "status: Field required"),
    (lambda d: d.update(status="done"), "status: Input should be 'running'"),
    (lambda d: d["stats"]["mail.db.read"].update(iops="fast"),
     "stats.mail.db.read.iops: Input should be a valid number"),
    (lambda d: d["thresholds"][0].pop("passed"), "thresholds.0.passed: Field required"),
])
def test_a_broken_record_names_the_field(tmp_path: Path, change: Any, field: str) -> None:
    data = stored()
    change(data)
    d = copy_run(tmp_path, data)
    with pytest.raises(RecordError, match="not a valid run record") as e:
        read_record(d)
    assert field in str(e.value) and str(d / "run.json") in str(e.value)
    shown = assay_in_process("show", str(d))  # in-process: no start-up
    assert shown.returncode == 2 and field in shown.stderr
    assert "Traceback" not in shown.stderr


def test_a_missing_or_corrupt_record_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no run.json"):
        read_record(tmp_path)
    (tmp_path / "run.json").write_text('{"id": "x", "status"', encoding="utf-8")
    with pytest.raises(RecordError, match="corrupt: not valid JSON"):
        read_record(tmp_path)
    (tmp_path / "run.json").write_text("[]", encoding="utf-8")
    with pytest.raises(RecordError, match="a JSON object was expected"):
        read_record(tmp_path)


def test_sweep_stamps_repeat_statistics_into_the_record(tmp_path: Path) -> None:
    d = copy_run(tmp_path)
    _stamp_runs(tmp_path, "sweep-1", [{"n": 2, "runs": [d.name], "metrics": {
        "mail.db.read.iops": {"mean": 150.0, "stdev": 2.5},
        "mail.db.read.lat_p99": {"mean": 0.2, "stdev": None}}}])
    run = read_record(d)
    assert run.repeat is not None and run.repeat.n == 2 and run.repeat.group == "sweep-1"
    assert run.repeat.stats["mail.db.read"]["iops"].mean == 150.0
    assert run.repeat.stats["mail.db.read"]["lat_p99_ms"].stdev is None
    assert run.stats == read_record(RUN).stats  # the rest of the record is untouched


def test_schema_command_prints_the_run_record_schema() -> None:
    out = CliRunner().invoke(cli, ["schema", "run"])
    assert out.exit_code == 0, out.output
    schema = json.loads(out.output)
    assert {"status", "stats", "thresholds", "schema_version"} <= set(schema["properties"])
    assert {"id", "status"} <= set(schema["required"])
    assert schema == RunRecord.model_json_schema() | {
        "title": "assay run record", "$schema": schema["$schema"]}


def test_schema_command_still_prints_the_scenario_schema_by_default() -> None:
    plain = CliRunner().invoke(cli, ["schema"])
    named = CliRunner().invoke(cli, ["schema", "scenario"])
    assert plain.exit_code == named.exit_code == 0
    assert plain.output == named.output
    assert json.loads(plain.output)["title"] == "assay scenario"
    bad = CliRunner().invoke(cli, ["schema", "nope"])
    assert bad.exit_code == 2

"""The exposition renderer on its own: OpenMetrics and text 0.0.4 from one model, label values
escaped (a threshold or scenario can hold quotes, backslashes, newlines), and the recorded
fixture run's export accepted by promtool's OpenMetrics importer."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.metrics.exposition import Family, render, wants_openmetrics
from assay.metrics.families import workload_hosts
from assay.report.exports import render as export
from assay.report.exports.openmetrics import load_start
from assay.results.rundir import read_record
from tests.observe.prom import PROMTOOL, needs_prometheus

RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"
HOSTILE = 'a "quoted"\\ name\nwith a newline } # EOF'


def families() -> list[Family]:
    c = Family("assay_io_bytes", "counter", "Bytes moved.", "bytes")
    c.add(10, {"component": HOSTILE})
    g = Family("assay_achieved_iops", "gauge", "IO/s, with a \\ and\na newline in help.")
    g.add(1.5, {"component": "x"})
    g.add(None, {"component": "missing"})  # left out, never NaN
    i = Family("assay_run", "info", "The run.")
    i.add(1, {"run_id": "r1"})
    return [c, g, i]


def test_both_formats_from_one_model() -> None:
    om = render(families(), openmetrics=True)
    text = render(families(), openmetrics=False)
    assert om.endswith("# EOF\n") and "# EOF" not in text.splitlines()
    assert "# TYPE assay_io_bytes counter" in om and "# UNIT assay_io_bytes bytes" in om
    assert "# TYPE assay_io_bytes_total counter" in text and "# UNIT" not in text
    assert "# TYPE assay_run info" in om and "# TYPE assay_run_info gauge" in text
    escaped = 'component="a \\"quoted\\"\\\\ name\\nwith a newline } # EOF"'
    assert f"assay_io_bytes_total{{{escaped}}} 10" in om.splitlines()
    assert "missing" not in om and "NaN" not in om
    assert wants_openmetrics("application/openmetrics-text;version=1.0.0,text/plain;q=0.5")
    assert not wants_openmetrics("text/plain") and not wants_openmetrics(None)


@needs_prometheus
def test_promtool_lints_the_text_format_with_hostile_labels() -> None:
    r = subprocess.run([str(PROMTOOL), "check", "metrics"], input=render(families(), False),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@needs_prometheus
def test_recorded_run_export_is_accepted_by_promtool(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    om = tmp_path / "run.om"
    om.write_text(export("openmetrics", run, read_record(run)))
    r = subprocess.run([str(PROMTOOL), "tsdb", "create-blocks-from", "openmetrics", str(om),
                        str(tmp_path / "blocks")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # one block holding the run's seconds: 4 components, 12 seconds each
    blocks = [p for p in (tmp_path / "blocks").iterdir() if (p / "meta.json").exists()]
    assert len(blocks) == 1
    meta = json.loads((blocks[0] / "meta.json").read_text())
    record = read_record(run)
    assert meta["minTime"] == round(load_start(run, record) * 1000)  # the load's start
    assert meta["maxTime"] > round(record.ended * 1000)  # the end, where verdicts are stamped
    assert meta["stats"]["numSeries"] > 4 * 8  # 4 components x their families
    assert meta["stats"]["numSamples"] > 4 * 12 * 8


@pytest.mark.parametrize("bad", ["Assay_Mixed", "x"])
def test_a_unit_must_end_the_name(bad: str) -> None:
    with pytest.raises(ValueError):
        Family(bad, "gauge", "h", "seconds")


def test_component_host_label() -> None:
    workloads = {"db": {"host": "local"}, "mail": {"host": "n2"}}
    assert workload_hosts(workloads, ["local"]) == {"db": "local", "mail": "n2"}
    # over several hosts a component's series is merged: its label says so
    assert workload_hosts(workloads, ["n1", "n2"]) == {"db": "cluster", "mail": "cluster"}

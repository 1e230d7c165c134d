"""`assay sweep` on real fio with the documented scenario: a grid with repeats (table, chart,
repeats.json, linked runs). The curve is tested on a throttled device (test_search_cap.py)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import needs_fio

pytestmark = needs_fio

DOC = Path(__file__).parents[2] / "docs" / "search.md"


def demo(tmp_path: Path) -> Path:
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
                 if b.startswith("# search-demo.yaml"))
    path = tmp_path / "search-demo.yaml"
    path.write_text(block.replace("dataset: 64MiB", "dataset: 16MiB"))
    return path


def sweep(tmp_path: Path, *args: str) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, "-m", "assay", "sweep", str(demo(tmp_path)), *args,
                           "--duration", "2s", "--results", str(tmp_path / "results"),
                           "--json"], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def test_grid_with_repeats(tmp_path: Path) -> None:
    chart = tmp_path / "sweep.svg"
    record, err = sweep(tmp_path, "--set", "db.data_iops=100,300", "--repeat", "2",
                        "--metric", "db.data.read.iops", "--metric", "db.data.read.lat_p99",
                        "--chart", str(chart))
    assert record["status"] == "done" and len(record["trials"]) == 4
    assert [t["point"]["db.data_iops"] for t in record["trials"]] == [100, 100, 300, 300]
    assert "db.data.read.iops" in err and "± " in err  # the table shows mean ± half width
    repeats = json.loads((tmp_path / "results" / "sweeps" / record["id"] /
                          "repeats.json").read_text())
    low, high = repeats["groups"]
    assert low["point"] == {"db.data_iops": 100} and low["n"] == 2 and len(low["runs"]) == 2
    iops = high["metrics"]["db.data.read.iops"]
    lo, hi = iops["ci95"]
    assert lo <= iops["mean"] <= hi and abs(iops["mean"] - 300) < 15
    assert low["metrics"]["db.data.read.iops"]["mean"] < iops["mean"]
    # every repeated run carries its point's statistics, and compare judges noise by them
    run = json.loads((tmp_path / "results" / high["runs"][0] / "run.json").read_text())
    assert run["repeat"]["n"] == 2
    assert run["repeat"]["stats"]["db.data.read"]["iops"]["mean"] == pytest.approx(iops["mean"])
    cmp = subprocess.run([sys.executable, "-m", "assay", "compare", low["runs"][0],
                          high["runs"][0], "--json", "--results", str(tmp_path / "results"),
                          "-o", str(tmp_path / "cmp.html")],
                         capture_output=True, text=True, timeout=120)
    assert cmp.returncode == 0, cmp.stderr
    doc = json.loads(cmp.stdout)
    assert "repeat" in doc["method"]
    assert any(v["basis"].startswith("repeats n=2/2") for d in doc["deltas"]
               for v in d["versus"] if v)
    svg = ET.parse(chart).getroot()
    assert svg.tag.endswith("svg") and "http" not in chart.read_text().replace(
        "http://www.w3.org/2000/svg", "")  # self-contained
    assert len(svg.findall(".//{http://www.w3.org/2000/svg}polyline")) == 2
    with sqlite3.connect(tmp_path / "results" / "catalogue.sqlite") as con:
        parents = {r[0] for r in con.execute("SELECT parent FROM runs")}
    assert parents == {record["id"]}


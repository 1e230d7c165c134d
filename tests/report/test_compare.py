"""Comparison logic on recorded runs: the noise test, alignment and the deltas."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from assay.metrics.stats import mean_var, welch_p
from assay.report.compare import CompareError, compare_data, load_views
from tests.conftest import assay_in_process

RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"


def test_welch_p_against_known_values() -> None:
    # two-sided Welch test, means 0 and 1, variances 1 and 1, n=10 each: t=-2.236, df=18
    assert welch_p(0, 1, 10, 1, 1, 10) == pytest.approx(0.0382, abs=5e-4)
    assert welch_p(5, 4, 30, 5, 9, 20) == pytest.approx(1.0)
    assert welch_p(0, 1, 1, 1, 1, 10) is None


def copies(tmp_path: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        d = tmp_path / f"run{i}"
        shutil.copytree(RUN, d)
        out.append(d)
    return out


def test_identical_runs_differ_in_nothing(tmp_path: Path) -> None:
    data = compare_data(load_views(copies(tmp_path, 2)))
    assert data["differences"] == []
    assert all(v["delta_pct"] == 0 and v["significant"] is False
               for d in data["deltas"] for v in d["versus"])


def test_a_slower_run_differs_and_its_config_is_listed(tmp_path: Path) -> None:
    a, b = copies(tmp_path, 2)
    lines = []
    for line in (b / "series.ndjson").read_text().splitlines():
        row = json.loads(line)
        if row["lat_avg_ms"] is not None:
            row["lat_avg_ms"] *= 3
        lines.append(json.dumps(row))
    (b / "series.ndjson").write_text("\n".join(lines) + "\n")
    run = json.loads((b / "run.json").read_text())
    run["stats"]["mail.db.read"]["lat_avg_ms"] *= 3
    run["target"]["fstype"] = "btrfs"
    run["target"]["mount_options"] = "rw,compress=zstd:3"
    (b / "run.json").write_text(json.dumps(run))
    data = compare_data(load_views([a, b]))
    row = next(d for d in data["deltas"]
               if d["component"] == "mail.db.read" and d["metric"] == "lat_avg_ms")
    assert row["versus"][0]["significant"] is True
    assert row["versus"][0]["delta_pct"] == pytest.approx(200, abs=0.5)
    iops = next(d for d in data["deltas"]
                if d["component"] == "mail.db.read" and d["metric"] == "iops")
    assert iops["versus"][0]["significant"] is False
    keys = dict((k, v) for k, v in data["differences"])
    assert keys["target.fstype"] == ["ext4", "btrfs"]
    assert keys["target.mount_options"][1] == "rw,compress=zstd:3"


def test_repeat_statistics_are_preferred(tmp_path: Path) -> None:
    a, b = copies(tmp_path, 2)
    for d, mean in ((a, 100.0), (b, 101.0)):
        run = json.loads((d / "run.json").read_text())
        run["repeat"] = {"n": 5, "stats": {"mail.db.read": {"iops": {"mean": mean,
                                                                     "stdev": 5.0}}}}
        (d / "run.json").write_text(json.dumps(run))
    data = compare_data(load_views([a, b]))
    assert "repeat" in data["method"]
    row = next(d for d in data["deltas"]
               if d["component"] == "mail.db.read" and d["metric"] == "iops")
    assert row["versus"][0]["basis"] == "repeats n=5/5"
    assert row["versus"][0]["significant"] is False


def test_align_on_a_step(tmp_path: Path) -> None:
    a, b = copies(tmp_path, 2)
    data = compare_data(load_views([a, b]), "event:snapshot-1")
    assert data["runs"][0]["steps"][0]["start"] == 0.0
    first_t = data["runs"][1]["series"]["mail.db.read"]["iops"][0][0]
    assert first_t < 0  # the seconds before the snapshot
    with pytest.raises(CompareError, match="no step named 'nope'.*snapshot-1"):
        compare_data(load_views([a, b]), "event:nope")
    with pytest.raises(CompareError, match="start"):
        compare_data(load_views([a, b]), "middle")


def test_cli_errors_are_exit_2_without_traceback(tmp_path: Path) -> None:
    import subprocess

    a, b = copies(tmp_path, 2)

    def assay(*args: str) -> subprocess.CompletedProcess[str]:  # in-process: no start-up
        return assay_in_process(*args, "--results", str(tmp_path / "results"))

    one = assay("compare", str(a))
    assert one.returncode == 2 and "at least two runs" in one.stderr
    bad = assay("compare", str(a), str(b), "--align", "event:nope", "-o", str(tmp_path / "c.html"))
    assert bad.returncode == 2 and "no step named 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr + one.stderr
    ok = assay("compare", str(a), str(b), "--align", "event:pull-disk", "-o",
               str(tmp_path / "c.html"))
    assert ok.returncode == 0, ok.stderr
    assert "what differed: no configuration or environment fact differs" in ok.stdout


def test_three_runs_against_one_baseline(tmp_path: Path) -> None:
    data = compare_data(load_views(copies(tmp_path, 3)))
    assert [r["label"] for r in data["runs"]] == ["A", "B", "C"]
    assert all(len(d["versus"]) == 2 and len(d["values"]) == 3 for d in data["deltas"])
    assert set(data["runs"][2]["latency"]) == set(data["components"])


SERIES = Path(__file__).parents[1] / "fixtures" / "series" / "randread-8k-qd16.csv"


def recorded_half(d: Path, half: int) -> list[float]:
    """Make run directory `d` hold half (0: first, 1: last) of a real 240 s run's per-second
    IOPS and p99 (tests/fixtures/series/) as its mail.db.read, measured over 120 s; returns
    the IOPS."""
    with SERIES.open() as f:
        rows = list(csv.DictReader(f))[120 * half:120 * (half + 1)]
    iops = [float(r["iops"]) for r in rows]
    (d / "series.ndjson").write_text("".join(
        json.dumps({"t": i + 1.0, "dt": 1.0, "c": "mail.db.read", "phase": "run",
                    "iops": float(r["iops"]), "lat_p99_ms": float(r["lat_p99_ms"])}) + "\n"
        for i, r in enumerate(rows)))
    run = json.loads((d / "run.json").read_text())
    run["measured_window_s"] = [0.0, 120.0]
    run["stats"]["mail.db.read"]["iops"] = sum(iops) / len(iops)
    (d / "run.json").write_text(json.dumps(run))
    return iops


def test_two_halves_of_one_real_run_are_noise(tmp_path: Path) -> None:
    # The IOPS of the two halves of one run (nothing changed) differ by 3.5 %; the seconds are
    # correlated (lag-1 0.6), so Welch on them calls that real (p = 0.0004); batch means do not.
    a, b = copies(tmp_path, 2)
    xa, xb = recorded_half(a, 0), recorded_half(b, 1)
    data = compare_data(load_views([a, b]))
    assert "batch means" in data["method"]
    row = next(d for d in data["deltas"]
               if d["component"] == "mail.db.read" and d["metric"] == "iops")["versus"][0]
    assert row["delta_pct"] == pytest.approx(-3.5, abs=0.1)
    assert row["significant"] is False and row["p"] > 0.05
    assert row["basis"].startswith("per-second, batch means 6×20 s")
    (ma, va), (mb, vb) = mean_var(xa), mean_var(xb)
    assert welch_p(ma, va, len(xa), mb, vb, len(xb)) < 0.001  # the test it replaces


def test_a_short_run_says_it_is_too_short_for_batches(tmp_path: Path) -> None:
    data = compare_data(load_views(copies(tmp_path, 2)))
    row = next(d for d in data["deltas"]
               if d["component"] == "mail.db.read" and d["metric"] == "iops")["versus"][0]
    assert row["basis"] == "per-second n=8/8, too short for batch means"

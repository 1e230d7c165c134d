"""A cluster run's summary and HTML report: the cluster line first, then per-host lines (a
section that opens on demand), the lost host and the start skew."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from assay.plan.build import plan_text
from assay.report.cluster import host_io, host_rows, host_series_rows
from assay.report.html import write_report
from assay.report.terminal import print_summary
from assay.results.rundir import read_record
from assay.runners import ReplayRunner
from tests.cluster.test_group import REPLAY, hosts_in, run
from tests.report.test_browser import CHROMIUM, browser, open_report  # noqa: F401


def cluster_run(tmp_path: Path) -> Path:
    text = (REPLAY / "scenario.yaml").read_text() + \
        '  each_host.db.data.read.lat_p99: "< 0.1ms"\n'  # fails on every host
    plan = plan_text(text, "scenario.yaml", hosts=hosts_in(tmp_path, ["n1", "n2", "n3"]))
    recordings = {"n1": "steady", "n2": "steady", "n3": "died"}
    out, _ = run(plan, tmp_path,
                 lambda host, work: ReplayRunner(REPLAY / recordings[host], host, work))
    return out.run_dir


def test_the_summary_shows_the_cluster_then_each_host(tmp_path: Path) -> None:
    run_dir = cluster_run(tmp_path)
    buf = io.StringIO()
    print_summary(Console(file=buf, width=160), read_record(run_dir), run_dir)
    text = buf.getvalue()
    assert text.index("Thresholds") < text.index("Cluster: 3 hosts, 2 active at the end")
    assert "host lost: n3 at" in text
    for h in ("n1", "n2", "n3"):
        assert f"│ {h} " in text
    assert text.count("db.data.read.lat_p99 < 0.1ms") == 6  # each host's own, reason + row
    assert "Hosts (each graded on its own)" in text
    assert "reason: n1: db.data.read.lat_p99 < 0.1ms; n2:" in text


def test_a_hosts_rate_counts_its_load_not_the_views_of_a_databases_transactions(
        tmp_path: Path) -> None:
    """A database's failures, schedule lag and transaction types are views of its commits:
    a host's IO/s adds fio's IOs and the commits, its worst p99 is of those."""
    run_dir = cluster_run(tmp_path)
    rec = json.loads((run_dir / "run.json").read_text())
    fio = sum(s["iops"] for s in rec["cluster"]["graded"]["n1"]["stats"].values())
    worst = max(s["lat_p99_ms"] for s in rec["cluster"]["graded"]["n1"]["stats"].values())
    pg = plan_text("name: t\nworkloads:\n  pg: {kind: postgres, driver: tpcc, rate: 10}\n",
                   "t.yaml")
    views = {c.name: c.view for c in pg.components}  # as the plan marks them in run.json
    for name, p99 in (("pg.tx.commit", worst / 2), ("pg.tx.failed", None),
                      ("pg.tx.lag", worst * 10), ("pg.new_order.commit", worst * 5)):
        rec["components"][name] = {"target_iops": None, "jobs": 0, "view": views[name]}
        rec["cluster"]["graded"]["n1"]["stats"][name] = {"iops": 100.0, "lat_p99_ms": p99}
    (run_dir / "run.json").write_text(json.dumps(rec))
    [n1] = [r for r in host_rows(read_record(run_dir)) if r["host"] == "n1"]
    assert n1["iops"] == pytest.approx(fio + 100.0) and n1["p99_ms"] == worst


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_a_host_back_in_the_load_is_active_at_the_end_and_says_since_when(
        tmp_path: Path, open_report: Any) -> None:  # noqa: F811
    """host_recover: the lost host's instances did IO again. It counts as active at the end,
    and its line says when it came back; one lost again after its return does not."""
    run_dir = cluster_run(tmp_path)
    rec = json.loads((run_dir / "run.json").read_text())
    lost_at = rec["cluster"]["lost"]["n3"]["t"]
    rejoin = {"kind": "rejoin", "host": "n3", "from": "n3", "instances": ["db@n3.0"],
              "lost_at_s": lost_at, "restart_s": 5.5, "first_io_s": 6.0, "gap_s": 2.0,
              "ios": 900, "exit": 0, "stopped": False, "host_lost_s": None}
    for again, active, state in ((None, 3, f"lost at {lost_at}s, back at 6.0s"),
                                 (7.5, 2, f"lost at {lost_at}s")):
        rec["cluster"]["failover"] = [{**rejoin, "host_lost_s": again}]
        (run_dir / "run.json").write_text(json.dumps(rec))
        buf = io.StringIO()
        print_summary(Console(file=buf, width=160), read_record(run_dir), run_dir)
        text = buf.getvalue()
        assert f"Cluster: 3 hosts, {active} active at the end" in text
        [n3] = [ln for ln in text.splitlines() if "│ n3 " in ln]
        assert f"│ {state} " in n3, n3
    # its own series ends at its loss: its thresholds after it are named as not graded
    skipped = f"db.iops >= 90% target after host_recover (lost at {lost_at}s)"
    rec["cluster"]["failover"] = [rejoin]
    rec["cluster"]["graded"]["n3"]["not_graded"] = [skipped]
    (run_dir / "run.json").write_text(json.dumps(rec))
    buf = io.StringIO()
    print_summary(Console(file=buf, width=200), read_record(run_dir), run_dir)
    assert f"not graded on n3: {skipped}" in buf.getvalue()
    page = open_report(write_report(run_dir)).page
    assert "3 hosts, 3 active at the end" in page.inner_text("#cluster")
    assert f"Not graded on n3: {skipped}" in page.inner_text("main")
    page.click("#per-host summary")
    assert f"lost at {lost_at} s, back at 6 s" in page.inner_text("#per-host table")


def test_each_host_shows_how_late_it_started_and_the_summary_their_spread(
        tmp_path: Path) -> None:
    """A host's `late` is its start after the run's instant T0; the start skew is the
    spread of those starts (replayed hosts start at once: their record says otherwise)."""
    run_dir = cluster_run(tmp_path)
    rec = json.loads((run_dir / "run.json").read_text())
    rec["cluster"]["skew_ms"] = {"run": {"n1": 2.7, "n2": 0.4, "n3": 1.1}}
    rec["cluster"]["worst_skew_ms"] = 2.3
    (run_dir / "run.json").write_text(json.dumps(rec))
    buf = io.StringIO()
    print_summary(Console(file=buf, width=160), read_record(run_dir), run_dir)
    lines = buf.getvalue().splitlines()
    assert any("start skew worst 2.3 ms" in ln for ln in lines)
    header = next(ln for ln in lines if "worst p99" in ln).split("┃")
    column = [c.strip() for c in header].index("late")
    assert [next(ln for ln in lines if f"│ {h} " in ln).split("│")[column].strip()
            for h in ("n1", "n2", "n3")] == ["+2.7 ms", "+0.4 ms", "+1.1 ms"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_a_host_without_thresholds_of_its_own_has_no_mark(tmp_path: Path,
                                                         open_report: Any) -> None:  # noqa: F811
    plan = plan_text((REPLAY / "scenario.yaml").read_text(), "scenario.yaml",
                     hosts=hosts_in(tmp_path, ["n1", "n2"]))
    out, _ = run(plan, tmp_path, lambda host, work: ReplayRunner(REPLAY / "steady", host, work))
    record = read_record(out.run_dir)
    assert [(r["host"], r["graded"], r["passed"]) for r in host_rows(record)] == \
        [("n1", False, True), ("n2", False, True)]
    buf = io.StringIO()
    print_summary(Console(file=buf, width=160), record, out.run_dir)
    lines = [ln for ln in buf.getvalue().splitlines() if "│ n1 " in ln or "│ n2 " in ln]
    assert len(lines) == 2 and all(ln.split("│")[0].strip() == "-" for ln in lines), lines
    assert "Hosts (no threshold of their own: each_host.)" in buf.getvalue()
    page = open_report(write_report(out.run_dir)).page
    assert "no threshold of their own" in page.inner_text("#per-host summary")
    page.click("#per-host summary")
    cells = page.locator("#per-host table tbody tr td:first-child").all_inner_texts()
    assert cells == ["–", "–"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_report_has_a_switchable_per_host_section(tmp_path: Path,
                                                      open_report: Any) -> None:  # noqa: F811
    run_dir = cluster_run(tmp_path)
    o = open_report(write_report(run_dir))
    page = o.page
    assert "3 hosts, 2 active at the end" in page.inner_text("#cluster")
    assert "Host lost: n3" in page.inner_text("main")
    assert not page.is_visible("#per-host table")  # closed until asked for
    page.click("#per-host summary")
    assert page.is_visible("#per-host table")
    rows = page.inner_text("#per-host table")
    assert "n1" in rows and "n2" in rows and "lost at" in rows
    assert "\tLATE\t" in rows.split("\n")[0]  # each host's start after T0
    assert rows.split("\n")[1].startswith("✗")  # n1 failed its own threshold
    assert o.errors == [] and o.requests == []
    rec = json.loads((run_dir / "run.json").read_text())
    assert rec["cluster"]["graded"]["n1"]["passed"] is False


def test_compare_names_what_differed_on_a_host(tmp_path: Path) -> None:
    from assay.report.diff import differences, facts

    a, b = cluster_run(tmp_path / "a"), cluster_run(tmp_path / "b")
    rec = json.loads((b / "run.json").read_text())
    rec["cluster"]["hosts"]["n2"]["kernel"] = "Linux 6.12.0"
    (b / "run.json").write_text(json.dumps(rec))
    diff = dict(differences([facts(read_record(d), d) for d in (a, b)]))
    # (the two runs' targets are different directories, also a difference)
    assert [k for k in diff if k.startswith("hosts.") and not k.endswith(".target")] == \
        ["hosts.n2.kernel"], diff
    assert diff["hosts.n2.kernel"][1] == "Linux 6.12.0"


def test_the_json_document_carries_each_host(tmp_path: Path) -> None:
    from assay.report.jsondoc import summary_document

    run_dir = cluster_run(tmp_path)
    doc = summary_document(read_record(run_dir), run_dir)["cluster"]
    assert doc["hosts"] == ["n1", "n2", "n3"] and list(doc["lost"]) == ["n3"]
    assert doc["each_host"]["n1"]["passed"] is False and doc["each_host"]["n1"]["ios"] > 0


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_report_draws_each_hosts_lines_switchable_and_a_lost_ones_ends(
        tmp_path: Path, open_report: Any) -> None:  # noqa: F811
    from tests.report.test_browser import BLUE, INK

    run_dir = cluster_run(tmp_path)
    o = open_report(write_report(run_dir))
    page = o.page
    assert o.errors == [] and o.requests == []
    legend = page.locator("#per-host-legend span")
    keys = [legend.nth(i).get_attribute("data-key") for i in range(legend.count())]
    assert {k.split("|")[0] for k in keys} == {"n1", "n2", "n3"}
    assert len(keys) == 9  # a host's three components each
    assert "(lost)" in page.inner_text("#per-host-legend")
    assert "n3 at" in page.inner_text("#per-host-charts ~ .hint")
    assert "surviving hosts' share (N-1)" in page.inner_text(".n-minus-1")
    # n3's line ends at its loss; the others run to the end
    io = page.evaluate("JSON.parse(document.getElementById('assay-data').textContent).host_io")
    lost_t = json.loads((run_dir / "run.json").read_text())["cluster"]["lost"]["n3"]["t"]
    last = {h: max(io[h]["db.data.read"]["iops"][0]) for h in io}
    assert last["n3"] <= lost_t + 1.0 < last["n1"] and last["n1"] == last["n2"]
    # n1 is the first colour: drawn (under n2's identical line until n2 is hidden), and
    # gone when its legend entries are clicked
    chart = '.chart[data-chart="per-host-iops"] canvas.base'
    page.locator('.chart[data-chart="per-host-iops"]').scroll_into_view_if_needed()
    for host in ("n2", "n1"):
        if host == "n1":
            page.wait_for_timeout(200)
            before = page.evaluate(INK, [chart, BLUE])["near"]
            assert before > 50
        for k in keys:
            if k.startswith(f"{host}|"):
                page.click(f'#per-host-legend span[data-key="{k}"]')
    assert page.evaluate(INK, [chart, BLUE])["near"] < before / 4
    page.screenshot(path=str(tmp_path / "per-host.png"), full_page=True)


def test_each_hosts_lines_come_from_its_series_and_an_older_runs_file_reads_the_same(
        tmp_path: Path) -> None:
    run_dir = cluster_run(tmp_path)
    lines = host_io(run_dir)
    assert sorted(lines) == ["n1", "n2", "n3"] and all(lines[h]["db.data.read"] for h in lines)
    rows = list(host_series_rows(run_dir))
    assert sum(r["ios"] for h, r in rows if h == "n1") > sum(r["ios"] for h, r in rows
                                                               if h == "n3") > 0
    old = tmp_path / "old"  # a run from before each host's streams: one file, key `host`
    old.mkdir()
    (old / "host_series.ndjson").write_text(
        "".join(json.dumps({"host": h, **r}) + "\n" for h, r in rows))
    assert host_io(old) == lines

"""The HTML report in a real headless Chromium: charts drawn, markers placed, nothing executed.

Skips only when Debian's `chromium` (or the playwright package) is missing; `make system`
installs chromium. Playwright drives the system browser: `playwright install` is never needed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from assay.report.html import write_report
from tests.conftest import needs_fio

RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(apt-get install chromium, or `make system`)")

# pixels of a canvas: how many are drawn at all, and how many are near a given colour
INK = """([sel, rgb]) => {
  const c = document.querySelector(sel);
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let ink = 0, near = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i + 3] > 0) ink++;
    if (d[i + 3] > 200 && Math.abs(d[i] - rgb[0]) < 25 && Math.abs(d[i + 1] - rgb[1]) < 25
        && Math.abs(d[i + 2] - rgb[2]) < 25) near++;
  }
  return {ink, near, size: c.width * c.height};
}"""
BLUE = [37, 99, 235]  # the first component's colour (mail.db.read)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip package playwright missing")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Opened:
    def __init__(self, page: Any):
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []


@pytest.fixture
def open_report(browser: Any) -> Iterator[Callable[[Path], Opened]]:
    pages: list[Any] = []

    def open_(path: Path) -> Opened:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        pages.append(page)
        o = Opened(page)
        page.on("console", lambda m: o.errors.append(m.text) if m.type in ("error", "warning")
                else None)
        page.on("pageerror", lambda e: o.errors.append(str(e)))
        page.on("dialog", lambda d: (o.dialogs.append(d.message), d.dismiss()))

        def block(route: Any) -> None:  # offline: anything but the file itself is refused
            if route.request.url != path.resolve().as_uri():
                o.requests.append(route.request.url)
                route.abort()
            else:
                route.continue_()
        page.route("**/*", block)
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("body[data-rendered=true]", timeout=10_000)
        return o

    yield open_
    for p in pages:
        p.close()


def copy_run(tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(RUN, dst)
    return dst


def ink(page: Any, chart: str) -> dict[str, int]:
    result: dict[str, int] = page.evaluate(INK, [f'.chart[data-chart="{chart}"] canvas.base',
                                                 BLUE])
    return result


def marker_names(page: Any, chart: str = "iops") -> list[str]:
    names: list[str] = page.eval_on_selector_all(
        f'.chart[data-chart="{chart}"] .event-marker', "els => els.map(e => e.dataset.name)")
    return names


def test_recorded_run_renders_charts_markers_and_tables(tmp_path: Path, open_report: Any) -> None:
    o = open_report(write_report(copy_run(tmp_path)))
    page = o.page
    assert o.errors == [] and o.dialogs == [] and o.requests == []
    # verdict first
    first = page.evaluate("document.querySelector('main').firstElementChild.id")
    assert first == "verdict"
    assert page.inner_text("#verdict .verdict") == "FAILED"
    assert page.locator("#thresholds tbody tr").count() == 7
    assert page.locator("#thresholds .bad").count() == 1
    assert page.locator("table.workload tbody tr").count() == 4
    # four time charts and the percentile chart, each with real lines in the first colour
    for chart in ("iops", "mbps", "lat_avg_ms", "lat_p99_ms", "percentiles"):
        px = ink(page, chart)
        assert px["ink"] > 0.02 * px["size"], chart
        assert px["near"] > 100, f"{chart}: no line in the first component's colour"
    assert marker_names(page) == ["snapshot-1", "pull-disk"]
    assert page.locator('.chart[data-chart="iops"] .event-marker.failed').count() == 1
    assert page.locator("#steps tbody tr").count() == 2
    assert "mail.log.write.lat_p99" in page.inner_text("#scenario")


def test_labels_of_steps_close_in_time_do_not_cover_each_other(tmp_path: Path,
                                                               open_report: Any) -> None:
    run = copy_run(tmp_path)
    close = [{"schema_version": 1, "time": 1795345454.0 + i, "kind": "step", "name": name,
              "action": "command", "t_start": 5.0 + 0.2 * i, "t_end": 5.3, "outcome": "ok"}
             for i, name in enumerate(["host_fail", "rebuild-wait"], start=1)]
    with (run / "events.ndjson").open("a") as f:
        f.writelines(json.dumps(e) + "\n" for e in close)
    o = open_report(write_report(run))
    assert o.errors == []
    assert marker_names(o.page) == ["snapshot-1", "host_fail", "rebuild-wait", "pull-disk"]
    boxes = o.page.eval_on_selector_all(
        '.chart[data-chart="iops"] .event-marker', "els => els.map(e => { "
        "const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })")
    for i, a in enumerate(boxes):  # three labels within 0.4 s stack in rows, none overlaps
        for b in boxes[i + 1:]:
            assert a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2], (a, b)
    assert len({round(b[2]) for b in boxes[:3]}) == 3


def test_zoom_legend_and_tooltip(tmp_path: Path, open_report: Any) -> None:
    page = open_report(write_report(copy_run(tmp_path))).page
    overlay = page.locator('.chart[data-chart="iops"] canvas.overlay')
    overlay.scroll_into_view_if_needed()
    box = overlay.bounding_box()
    y = box["y"] + box["height"] / 2
    # drag over the last third of the run: the snapshot at 5 s leaves the view, 8 s stays
    page.mouse.move(box["x"] + box["width"] * 0.62, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.97, y, steps=5)
    page.mouse.up()
    assert marker_names(page) == ["pull-disk"]
    assert marker_names(page, "lat_p99_ms") == ["pull-disk"]  # every chart follows the zoom
    page.mouse.move(box["x"] + box["width"] * 0.8, y)
    assert page.locator('.chart[data-chart="iops"] .tooltip').is_visible()
    assert "mail.db.read" in page.inner_text('.chart[data-chart="iops"] .tooltip')
    page.mouse.dblclick(box["x"] + box["width"] * 0.5, y)
    assert marker_names(page) == ["snapshot-1", "pull-disk"]
    before = ink(page, "iops")["near"]
    page.click('.legend span[data-key="mail.db.read"]')
    assert ink(page, "iops")["near"] < before / 4  # the blue line is gone


def test_hostile_names_are_shown_as_text_and_run_nothing(tmp_path: Path,
                                                         open_report: Any) -> None:
    run_dir = copy_run(tmp_path)
    evil = "<script>alert(1)</script>"
    run = json.loads((run_dir / "run.json").read_text())
    run["scenario"]["name"] = evil
    run["warnings"] = ['<img src=x onerror="alert(2)">']
    (run_dir / "run.json").write_text(json.dumps(run))
    events = (run_dir / "events.ndjson").read_text().replace(
        '"name":"pull-disk"', '"name":"<img src=y onerror=alert(3)>"')
    (run_dir / "events.ndjson").write_text(events)
    (run_dir / "scenario.yaml").write_text(f"name: '{evil}'\n")
    o = open_report(write_report(run_dir))
    page = o.page
    assert o.dialogs == [] and o.errors == []
    assert page.inner_text("h1.scenario-name") == evil
    assert page.title() == f"assay: {evil} (failed)"
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("document.scripts.length") == 3  # ours only
    assert '<img src=x onerror="alert(2)">' in page.inner_text(".warning")
    assert "<img src=y onerror=alert(3)>" in marker_names(page)


def test_run_without_steps_with_phases(tmp_path: Path, open_report: Any) -> None:
    run_dir = copy_run(tmp_path)
    lines = [ln for ln in (run_dir / "events.ndjson").read_text().splitlines()
             if '"kind":"step"' not in ln]
    (run_dir / "events.ndjson").write_text("\n".join(lines) + "\n")
    (run_dir / "samples.ndjson").unlink()  # charts need only series.ndjson
    run = json.loads((run_dir / "run.json").read_text())
    run["phases"] = [{"name": "before", "start": 3, "end": 6},  # as metrics/phases.py writes
                     {"name": "during", "start": 6, "end": 9},
                     {"name": "after", "start": 9, "end": 11}]
    (run_dir / "run.json").write_text(json.dumps(run))
    o = open_report(write_report(run_dir))
    assert o.errors == []
    assert marker_names(o.page) == []
    assert "No timeline steps ran" in o.page.inner_text("main")
    assert "No latency histograms" in o.page.inner_text("main")
    assert ink(o.page, "iops")["near"] > 100


@needs_fio
def test_a_built_in_scenario_run_leaves_a_report_that_renders_offline(
        run_scenario: Any, open_report: Any) -> None:
    text = resources.files("assay.scenarios").joinpath("exchange-quick.yaml").read_text()
    text = text.replace("warmup: 10s", "warmup: 1s").replace("dataset: 1GiB", "dataset: 128MiB")
    outcome, run = run_scenario(text, duration=3)
    report = outcome.run_dir / "report.html"
    assert report.exists(), "the engine writes report.html at the end of every run"
    o = open_report(report)
    assert o.errors == [] and o.requests == []
    assert o.page.inner_text("#verdict .verdict").startswith(run["status"].upper())
    assert ink(o.page, "iops")["near"] > 50
    assert ink(o.page, "percentiles")["ink"] > 0


STEPS = """
name: steps-in-report
workloads:
  db: {kind: oltp, preset: standard, dataset: 64MiB}
timeline:
  warmup: 1s
  duration: 5s
  steps:
    - {name: settle, action: pause, at: 1s, for: 1s}
    - {name: mark, action: command, at: 3s, run: "sleep 0.3"}
"""


@needs_fio
def test_real_timeline_steps_and_phases_are_drawn(run_scenario: Any, open_report: Any) -> None:
    outcome, run = run_scenario(STEPS)
    assert outcome.status == "completed", run.get("reason")  # no thresholds: nothing graded
    o = open_report(outcome.run_dir / "report.html")
    assert o.errors == []
    assert o.page.inner_text("#verdict .verdict") == "COMPLETED: nothing graded"
    assert marker_names(o.page) == ["settle", "mark"]
    data = json.loads(o.page.text_content("#assay-data") or "{}")
    names = [p["name"] for p in data["phases"]]
    assert "during settle" in names and "during mark" in names and names[0] == "warm-up"
    assert o.page.locator("#steps tbody tr").count() == 2


def test_an_aborted_run_without_series_still_renders(tmp_path: Path, open_report: Any) -> None:
    run_dir = copy_run(tmp_path)
    for name in ("series.ndjson", "samples.ndjson", "events.ndjson"):
        (run_dir / name).unlink()
    run = json.loads((run_dir / "run.json").read_text())
    run.update(status="aborted", reason="prefill failed (fio exit 1): No space left on device",
               stats={}, thresholds=[], verdict={})
    run.pop("measured_window_s")
    (run_dir / "run.json").write_text(json.dumps(run))
    o = open_report(write_report(run_dir))
    assert o.errors == []
    text = o.page.inner_text("main")
    assert o.page.inner_text("#verdict .verdict") == "ABORTED"
    assert "No space left on device" in o.page.inner_text(".reason")
    assert "nothing was graded" in text and "No timeline steps ran" in text


# translucent fill in a colour: X-Ray's band drawn behind the lines
TINT = """([sel, rgb]) => {
  const c = document.querySelector(sel);
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i + 3] > 20 && d[i + 3] < 90 && Math.abs(d[i] - rgb[0]) < 30
        && Math.abs(d[i + 1] - rgb[1]) < 30 && Math.abs(d[i + 2] - rgb[2]) < 30) n++;
  }
  return n;
}"""


def test_host_utilisation_and_the_xray_band_are_drawn(tmp_path: Path, open_report: Any) -> None:
    import time

    from assay.hosts.utilisation import HostProbe

    run = copy_run(tmp_path)
    probe = HostProbe()
    rows = []
    for t in range(1, 12):  # real probe readings, one per second of the fixture's clock
        time.sleep(0.02)
        row = {"t": float(t), "host": "local", **probe.sample()}
        # a known send rate on top of the (idle) network, a known busy CPU (an idle machine
        # reads 0 % over 20 ms) and a known memory use, so their lines slope: a flat line
        # that falls between two pixel rows is drawn half-transparent in both
        row["net.test0.tx_mbps"], row["net.test0.rx_mbps"] = 5.0 + t, 0.0
        row["cpu_pct"] = 20.0 + 3 * t
        row["mem_used_pct"] = 30.0 + 2 * t
        rows.append(row)
    (run / "hosts.ndjson").write_text("".join(json.dumps(r) + "\n" for r in rows))
    o = open_report(write_report(run))
    page = o.page
    assert o.errors == []
    assert page.locator("#hosts").count() == 1
    legend = page.inner_text("#hosts ~ .legend")
    assert all(w in legend for w in ("busy", "user", "iowait", "memory", "received", "sent"))
    # the palette's 1st, 5th and 7th colours: CPU busy, memory used, network sent
    lines = {"busy": BLUE, "memory": [112, 72, 232], "sent": [176, 137, 0]}
    for chart, line in (("host-cpu", "busy"), ("host-mem", "memory"), ("host-net", "sent")):
        page.locator(f'.chart[data-chart="{chart}"]').scroll_into_view_if_needed()
        page.wait_for_timeout(200)
        px = page.evaluate(INK, [f'.chart[data-chart="{chart}"] canvas.base', lines[line]])
        assert px["near"] > 50, f"{chart}: no {line} line drawn"
    # the 95 % band around mail.db.read's 144.7 IO/s target, tinted in its colour
    band = page.evaluate(TINT, ['.chart[data-chart="iops"] canvas.base', BLUE])
    assert band > 2000
    # hidden with its component, the band goes too
    page.locator('.legend span[data-key="mail.db.read"]').first.click()
    assert page.evaluate(TINT, ['.chart[data-chart="iops"] canvas.base', BLUE]) < band / 10


def test_a_run_without_host_rows_says_so(tmp_path: Path, open_report: Any) -> None:
    page = open_report(write_report(copy_run(tmp_path))).page
    assert "No host utilisation was recorded" in page.inner_text("main")


def test_integrity_passes_and_offsets_are_shown(tmp_path: Path, open_report: Any) -> None:
    from assay.integrity.session import section
    from assay.scenario.models import IntegritySpec

    run_dir = copy_run(tmp_path)
    record = json.loads((run_dir / "run.json").read_text())
    passes = [{"label": n, "t": 20.0, "status": "completed", "checked": 4096, "blocks": 4096,
               "ok": 4094 - i, "lost": 0, "stale": i, "corrupt": 2, "unreadable": 0,
               "mbps": 812.5, "workloads": {"db": {"offsets": {
                   "corrupt": [8192, 65536], **({"stale": [40960]} if i else {})},
                   "corrupt": 2, "stale": i}}} for i, n in enumerate(("check#1", "final"))]
    passes[1]["data_files"] = {  # the checksum pass over the workload's own files
        "files": 4, "blocks": 7680, "checked": 7680, "ok": 7679, "corrupt": 1, "unreadable": 0,
        "workloads": {"db": {"offsets": [{"file": "db.data.1.dat", "offset": 24576,
                                          "state": "corrupt", "fault": "data checksum"}]}}}
    record["integrity"] = section(IntegritySpec(), True, [
        {"workload": "db", "blocks": 4096, "block_size": 8192, "acknowledged": 900,
         "write_errors": 0}], passes, "verified")
    (run_dir / "run.json").write_text(json.dumps(record))
    o = open_report(write_report(run_dir))
    assert o.errors == []
    rows = o.page.eval_on_selector_all("#integrity-passes tbody tr",
                                       "rs => rs.map(r => r.innerText)")
    assert len(rows) == 2 and rows[1].split("\t")[:7] == ["final", "0:20", "completed", "4,096",
                                                          "0", "1", "2"]
    text = o.page.inner_text("body")
    assert "final: db stale at byte offsets 40960" in text
    assert "check#1: db corrupt at byte offsets 8192, 65536" in text
    assert "final: data files (fio's verify headers, Jetstress' checksum pass): 7,680 of " \
        "7,680 blocks in 4 files, 1 corrupt, 0 unreadable" in text
    assert "final: db data db.data.1.dat at 24576 (data checksum)" in text


def test_a_line_is_not_drawn_across_seconds_nobody_measured(tmp_path: Path,
                                                           open_report: Any) -> None:
    """A host whose IO froze sends no dump: the merged series has no second there, and its
    line stops at the gap rather than joining the values either side; a missing value, or a
    second or two late, as before."""
    o = open_report(write_report(copy_run(tmp_path)))
    runs = o.page.evaluate("([xs, ys]) => AssayCharts.segments(xs, ys, false)",
                           [[0, 1, 2, 3, 4, 9, 10, 11, 13, 14], [1, 2, 3, None, 5, 6, 7, 8, 9, 1]])
    assert runs == [[0, 1, 2], [4], [5, 6, 7, 8, 9]]
    # on a log axis a zero is not drawn either
    assert o.page.evaluate("AssayCharts.segments([0, 1, 2], [1, 0, 3], true)") == [[0], [2]]

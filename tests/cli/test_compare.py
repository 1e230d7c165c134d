"""`assay compare` of the same scenario on XFS and on btrfs with zstd compression, for real.

Two short runs (3 s measured) on loop-device filesystems; the comparison must name the facts
that differ (filesystem, mount options) and overlay both runs' series in the browser.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assay.cli import cli
from tests.conftest import needs_fio, needs_root

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

SCENARIO = """
name: compare-me
workloads:
  db: {kind: oltp, preset: standard, dataset: 128MiB}
timeline: {warmup: 1s, duration: 3s}
thresholds:
  db.data.read.lat_p99: "< 500ms"
"""


@needs_fio
@needs_root
def test_compare_xfs_with_compressed_btrfs(run_scenario: Any, loopfs: Any, results: Path,
                                           tmp_path: Path) -> None:
    _, xfs = loopfs("xfs", "512M")
    _, btrfs = loopfs("btrfs", "512M")
    subprocess.run(["mount", "-o", "remount,compress=zstd", str(btrfs)], check=True)
    a, _ = run_scenario(SCENARIO, target_dir=xfs)
    b, _ = run_scenario(SCENARIO, target_dir=btrfs)
    assert a.status in ("passed", "failed") and b.status in ("passed", "failed")

    out = tmp_path / "cmp.html"
    res = CliRunner().invoke(cli, ["compare", str(a.run_dir), str(b.run_dir), "-o", str(out),
                                   "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    diffs = dict((k, v) for k, v in doc["differences"])
    assert diffs["target.fstype"] == ["xfs", "btrfs"]
    assert "compress=zstd" in diffs["target.mount_options"][1]
    assert "compress" not in diffs["target.mount_options"][0]
    assert "Welch" in doc["method"]
    assert {d["component"] for d in doc["deltas"]} >= {"db.data.read", "db.data.write"}

    table = CliRunner().invoke(cli, ["compare", str(a.run_dir), str(b.run_dir), "-o",
                                     str(tmp_path / "again.html")], catch_exceptions=False)
    print(table.output)  # visible with -s
    assert "What differed" in table.output and "target.fstype" in table.output

    if CHROMIUM is None:
        pytest.skip("chromium is not installed: the overlay was not checked in a browser")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(out.resolve().as_uri())
            page.wait_for_selector("body[data-rendered=true]")
            assert errors == []
            keys = page.eval_on_selector_all(".legend span", "els => els.map(e => e.dataset.key)")
            assert {k.split("|")[0] for k in keys} == {"A", "B"}  # both runs overlaid
            assert "target.fstype" in page.inner_text("#differences")
            assert page.locator('.chart[data-chart="percentiles"] canvas.base').count() == 1
            # each run's lines are drawn on the IOPS chart (the other run hidden, so one
            # cannot cover the other)
            for shown, hidden, rgb in (("A", "B", [37, 99, 235]), ("B", "A", [232, 89, 12])):
                for k in keys:
                    on = "off" not in (page.get_attribute(f'.legend span[data-key="{k}"]',
                                                          "class") or "")
                    if on != k.startswith(shown + "|"):
                        page.click(f'.legend span[data-key="{k}"]')
                count = page.evaluate("""(rgb) => {
                  const c = document.querySelector('.chart[data-chart="iops"] canvas.base');
                  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                  let n = 0;
                  for (let i = 0; i < d.length; i += 4)
                    if (Math.abs(d[i] - rgb[0]) < 25 && Math.abs(d[i + 1] - rgb[1]) < 25
                        && Math.abs(d[i + 2] - rgb[2]) < 25 && d[i + 3] > 200) n++;
                  return n;
                }""", rgb)
                assert count > 50, f"run {shown}'s lines are missing ({hidden} hidden)"
        finally:
            browser.close()

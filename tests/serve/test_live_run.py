"""A real fio run watched through `assay serve` while it runs: listed as running, its page
rebuilt from what it has written so far and refreshing itself, then its final report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import needs_fio
from tests.observe.prom import http_get
from tests.serve.conftest import serving

pytestmark = needs_fio

SCENARIO = """\
name: serve-live
workloads:
  db: {kind: oltp, data_iops: 200, log_iops: 20, dataset: 48MiB, load: {pacing: even}}
timeline: {warmup: 1s, duration: 12s}
"""


def page_data(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="assay-data">(.*?)</script>', html, re.S)
    assert m, html[:500]
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def points(data: dict[str, Any]) -> int:
    return max((len(m["iops"][0]) for m in data["series"].values()), default=0)


def test_a_running_run_shows_live(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    with serving(root) as url:
        run = subprocess.Popen([sys.executable, "-m", "assay", "run", str(scenario)],
                               env={**os.environ, "ASSAY_RESULTS": str(root)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            seen: list[tuple[str, int, bool]] = []
            deadline = time.monotonic() + 180
            while run.poll() is None and time.monotonic() < deadline:
                try:  # a loaded machine may answer slowly: a missed look is no failure
                    listing = page_data(http_get(url + "/", timeout=30)[2].decode())
                    for r in listing["runs"]:
                        if r["status"] == "running":
                            html = http_get(f"{url}/runs/{r['id']}/", timeout=30)[2].decode()
                            seen.append((page_data(html)["run"]["status"],
                                         points(page_data(html)),
                                         'http-equiv="refresh"' in html))
                except OSError:
                    pass
                time.sleep(1.0)
            _, err = run.communicate(timeout=180)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        assert run.returncode in (0, 1), err
        live = [s for s in seen if s[0] == "running"]
        assert live and all(refresh for _, _, refresh in live), seen
        counts = [n for _, n, _ in live]
        assert max(counts) > min(counts), counts  # the page grew with the run
        listing = page_data(http_get(url + "/", timeout=60)[2].decode())
        (done,) = listing["runs"]
        assert done["status"] in ("passed", "failed", "completed")
        html = http_get(f"{url}/runs/{done['id']}/", timeout=60)[2].decode()
        assert 'http-equiv="refresh"' not in html
        assert page_data(html)["run"]["status"] == done["status"]
        assert points(page_data(html)) >= max(counts)

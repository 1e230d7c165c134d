"""A results directory for `assay serve` tests: copies of a recorded real fio run, varied in
what the filters read (scenario, platform, status, date, host, compressibility), one with
hostile names everywhere, one still running, and a search record."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from assay.report.html import write_report

RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"
HOSTILE = "<img src=x onerror=alert(1)>\"'&"
HOSTILE_DESC = "</script><script>alert(2)</script>"
DAY = 86400.0

# dir name, scenario, platform, status, days before now, hostname, compressibility
RUNS = [
    ("20261101-100000_mail-btrfs_aaaaa1", "mail-btrfs", "btrfs", "passed", 20, "node-a", 1.0),
    ("20261105-100000_mail-btrfs_aaaaa2", "mail-btrfs", "btrfs", "failed", 16, "node-a", 2.0),
    ("20261110-100000_mail-xfs_aaaaa3", "mail-xfs", "xfs", "passed", 11, "node-b", 1.0),
    ("20261112-100000_x<b>y_aaaaa4", HOSTILE, "xfs", "aborted", 9, "node-b", 1.0),
]
LIVE = "20261120-100000_mail-live_aaaaa5"


def copy_run(root: Path, name: str, **edit: Any) -> Path:
    d = root / name
    shutil.copytree(RUN, d)
    run = json.loads((d / "run.json").read_text())
    run["id"] = name
    for key, value in edit.items():
        section, _, field = key.partition("__")
        if field:
            run.setdefault(section, {})[field] = value
        else:
            run[key] = value
    (d / "run.json").write_text(json.dumps(run, indent=2))
    return d


def build(root: Path) -> dict[str, Path]:
    root.mkdir(parents=True, exist_ok=True)
    now = time.time()
    out = {}
    for name, scenario, platform, status, days, host, comp in RUNS:
        d = copy_run(root, name, status=status, started=now - days * DAY,
                     scenario__name=scenario, target__platform=platform,
                     environment__hostname=host,
                     scenario__description=HOSTILE_DESC if scenario == HOSTILE else
                     f"Exchange on {platform}")
        run = json.loads((d / "run.json").read_text())
        run["plan"]["workloads"]["mail"]["data"]["compressibility"] = comp
        if scenario == HOSTILE:
            run["thresholds"][0]["expr"] = HOSTILE
            run["reason"] = HOSTILE_DESC
        (d / "run.json").write_text(json.dumps(run, indent=2))
        write_report(d)
        out[name] = d
    # a run still going: its process (this test's) is alive and started before it
    live = copy_run(root, LIVE, status="running", started=now - 5, pid=os.getpid(),
                    scenario__name="mail-live", target__platform="btrfs",
                    environment__hostname="node-c")
    for key in ("verdict", "stats", "thresholds", "ended", "elapsed_s"):
        run = json.loads((live / "run.json").read_text())
        run.pop(key, None)
        (live / "run.json").write_text(json.dumps(run, indent=2))
    out[LIVE] = live
    # a search record whose trials point at two of the runs
    rec = root / "searches" / "20261115-100000_mail-btrfs_ccccc1"
    rec.mkdir(parents=True)
    (rec / "search.json").write_text(json.dumps({
        "schema_version": 1, "kind": "search", "id": rec.name, "scenario": HOSTILE,
        "status": "done", "created": now - 10 * DAY, "parameter": "mail.mailboxes",
        "trials": [{"run_id": RUNS[0][0], "value": 2000, "status": "passed", "passed": True},
                   {"run_id": RUNS[1][0], "value": 4000, "status": "failed",
                    "passed": False}]}))
    return out

"""JUnit XML export: one test case per threshold, so CI systems show what passed and failed.

A failed threshold is a <failure> with observed vs bound; a run that did not complete (aborted,
interrupted) adds an <error> to the `run completed` case, since its thresholds prove nothing.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from assay.scenario.units import format_latency_ms

SUFFIX = "xml"


def _value(metric: str, v: float | None) -> str:
    if v is None:
        return "none"
    return format_latency_ms(v) if metric.startswith("lat_") else f"{v:,.2f}"


def render(run_dir: Path, run: dict[str, Any]) -> str:
    scenario = (run.get("scenario") or {}).get("name") or "scenario"
    status = run.get("status") or "unknown"
    thresholds = run.get("thresholds") or []
    completed = status in ("passed", "failed")
    failures = sum(not t.get("passed") for t in thresholds)
    root = ET.Element("testsuites", name="assay")
    suite = ET.SubElement(root, "testsuite", {
        "name": f"assay.{scenario}", "tests": str(len(thresholds) + 1),
        "failures": str(failures), "errors": "0" if completed else "1", "skipped": "0",
        "time": f"{float(run.get('elapsed_s') or 0):.2f}",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(run.get("started") or 0)),
        "hostname": str((run.get("environment") or {}).get("hostname") or "")})
    props = ET.SubElement(suite, "properties")
    target = run.get("target") or {}
    for name, value in (("run_id", run.get("id")), ("status", status),
                        ("platform", target.get("platform")), ("fstype", target.get("fstype")),
                        ("fio_version", (run.get("environment") or {}).get("fio_version"))):
        if value is not None:
            ET.SubElement(props, "property", name=name, value=str(value))
    case = ET.SubElement(suite, "testcase", classname=f"assay.{scenario}", name="run completed",
                         time=f"{float(run.get('elapsed_s') or 0):.2f}")
    if not completed:
        ET.SubElement(case, "error", message=f"run {status}: {run.get('reason') or 'no reason'}",
                      type=status)
    for t in thresholds:
        metric = str(t.get("metric") or "")
        case = ET.SubElement(suite, "testcase", classname=f"assay.{scenario}.{t.get('component')}",
                             name=str(t.get("expr")), time="0")
        if not t.get("passed"):
            observed, bound = _value(metric, t.get("observed")), _value(metric, t.get("bound"))
            failure = ET.SubElement(case, "failure", type="threshold",
                                    message=f"observed {observed}, bound {bound}")
            failure.text = (f"{t.get('expr')}: {t.get('component')} {metric} was {observed}; "
                            f"the bound is {bound}" + (f" ({t['note']})" if t.get("note") else ""))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

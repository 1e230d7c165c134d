"""JUnit XML export: one test case per threshold, so CI systems show what passed and failed.

A failed threshold is a <failure> with observed vs bound; a run that did not complete (aborted,
interrupted) adds an <error> to the `run completed` case, since its thresholds prove nothing.
An incomplete run (too few seconds graded) has that <error> too, and each threshold is
<skipped> (not graded); a run with no thresholds has one <skipped> `thresholds` case: nothing
graded is not a pass.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

from assay.results.record import RunRecord
from assay.scenario.units import format_latency_ms

SUFFIX = "xml"


def _value(metric: str, v: float | None) -> str:
    if v is None:
        return "none"
    return format_latency_ms(v) if metric.startswith("lat_") else f"{v:,.2f}"


def render(run_dir: Path, record: RunRecord) -> str:
    scenario = record.scenario.name or "scenario"
    status = record.status
    env, target = record.environment, record.target
    completed = status in ("passed", "failed", "completed")
    failures = sum(t.graded and not t.passed for t in record.thresholds)
    skipped = sum(not t.graded for t in record.thresholds) + (status == "completed")
    elapsed = f"{record.elapsed_s or 0:.2f}"
    root = ET.Element("testsuites", name="assay")
    suite = ET.SubElement(root, "testsuite", {
        "name": f"assay.{scenario}",
        "tests": str(len(record.thresholds) + 1 + (status == "completed")),
        "failures": str(failures), "errors": "0" if completed else "1",
        "skipped": str(skipped),
        "time": elapsed,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.started)),
        "hostname": env.hostname or ""})
    props = ET.SubElement(suite, "properties")
    for name, value in (("run_id", record.id), ("status", status),
                        ("platform", target.platform), ("fstype", target.fstype),
                        ("fio_version", env.fio_version)):
        if value is not None:
            ET.SubElement(props, "property", name=name, value=str(value))
    case = ET.SubElement(suite, "testcase", classname=f"assay.{scenario}", name="run completed",
                         time=elapsed)
    if not completed:
        ET.SubElement(case, "error", message=f"run {status}: {record.reason or 'no reason'}",
                      type=status)
    if status == "completed":
        case = ET.SubElement(suite, "testcase", classname=f"assay.{scenario}",
                             name="thresholds", time="0")
        ET.SubElement(case, "skipped", message="nothing graded: no thresholds declared")
    for t in record.thresholds:
        case = ET.SubElement(suite, "testcase", classname=f"assay.{scenario}.{t.component}",
                             name=t.expr, time="0")
        if not t.graded:
            ET.SubElement(case, "skipped", message=f"not graded: {record.reason}")
        elif not t.passed:
            observed, bound = _value(t.metric, t.observed), _value(t.metric, t.bound)
            failure = ET.SubElement(case, "failure", type="threshold",
                                    message=f"observed {observed}, bound {bound}")
            failure.text = (f"{t.expr}: {t.component} {t.metric} was {observed}; "
                            f"the bound is {bound}" + (f" ({t.note})" if t.note else ""))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

"""One self-contained HTML file per run (or comparison): inline CSS and JS, data as JSON.

The page is built in the browser from a `<script type="application/json">` block with `textContent`
only, so nothing in a run (a scenario name, an error message) can become markup or script: the
JSON is escaped so that `<`, `>` and `&` never appear raw inside the block.
"""

from __future__ import annotations

import html
import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

from assay import __version__
from assay.report import rundata
from assay.report.cluster import cluster_data, host_io
from assay.report.diff import flatten
from assay.report.platform import platform_data
from assay.report.salvage import measured, shout, status_label
from assay.results import safeopen
from assay.results.record import RecordError, RunRecord
from assay.results.rundir import read_record


def asset(name: str) -> str:
    text = resources.files("assay.report").joinpath("assets", name).read_text(encoding="utf-8")
    if "</script" in text.lower():  # would end the inline block early
        raise ValueError(f"report asset {name} contains </script")
    return text


def safe_json(data: Any) -> str:
    """JSON that is inert inside a <script> block (and in an HTML attribute, for that matter)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False, default=str)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page(title: str, data: dict[str, Any]) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"generator\" content=\"assay {html.escape(__version__)}\">\n"
        f"<title>{html.escape(title)}</title>\n<style>\n{asset('report.css')}</style>\n"
        "</head>\n<body>\n<main id=\"app\"><noscript>This report draws its tables and charts "
        "with JavaScript; please enable it.</noscript></main>\n"
        f"<script type=\"application/json\" id=\"assay-data\">{safe_json(data)}</script>\n"
        f"<script>\n{asset('charts.js')}</script>\n<script>\n{asset('report.js')}</script>\n"
        "</body>\n</html>\n")


def clean_json(value: Any) -> Any:
    """NaN/inf are not JSON: show them as missing."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    return value


def _verbatim(held: safeopen.Inside, name: str) -> str:
    """A file of the run directory shown as written: '' when it is missing, a link, not a
    regular file or hard-linked (results/safeopen.py)."""
    try:
        return held.read_text(name)
    except OSError:
        return ""


def run_data(run_dir: Path, run: RunRecord, held: safeopen.Inside | None = None) \
        -> dict[str, Any]:
    """The data a run report draws, from the stored files only; the files it shows verbatim
    (scenario.yaml, each host's run.fio) are opened inside `held`, the run directory held
    open (opened here when not given), never through a link out of it."""
    if held is None:
        with safeopen.Inside(run_dir) as opened:
            return run_data(run_dir, run, opened)
    cols = rundata.per_second(run_dir)
    last_t = max((c["t"][-1] for c in cols.values() if c["t"]), default=0.0)
    sc = run.scenario
    return clean_json({
        "kind": "run",
        "generator": f"assay {__version__}",
        "generated": time.time(),
        "run": {"id": run.id or run_dir.name, "status": run.status, "reason": run.reason,
                "started": run.started, "elapsed_s": run.elapsed_s,
                "verdict": run.verdict.stored() if run.verdict else {},
                "headline": run.headline()[0], "graded_s": run.graded_s,
                "window": list(run.measured_window()),
                "scenario": {"name": sc.name, "file": sc.file, "description": sc.description},
                "warnings": run.warnings},
        "thresholds": [t.stored() for t in run.thresholds],
        "stats": {c: s.stored() for c, s in run.stats.items()},
        "components": list(cols) or list(run.components),
        "series": rundata.chart_series(cols),
        "phases": rundata.phases(run, last_t),
        "steps": rundata.steps(run_dir),
        "latency": rundata.latency_curves(run_dir, run),
        "hosts": rundata.host_series(run_dir),
        "host_stats": run.hosts,
        "cluster": cluster_data(run),
        "platform": platform_data(run_dir),
        "host_io": host_io(run_dir) if cluster_data(run) else {},
        "integrity": run.integrity,
        "bands": rundata.xray_bands(run),
        # as stored: the report lists the facts the run recorded, no defaults
        "environment": sorted(flatten(run.environment.stored()).items()),
        "target": sorted(flatten(run.target.stored()).items()),
        "scenario_yaml": _verbatim(held, "scenario.yaml"),
        "job_files": rundata.job_files(held),
    })


def build_report(run_dir: Path, held: safeopen.Inside | None = None) -> str:
    """The report of a stored run; `held`: its directory already held open (assay serve,
    which refuses a linked run directory), else it is opened here."""
    if held is None:
        try:
            opened = safeopen.Inside(run_dir)
        except OSError:
            read_record(run_dir)  # says what is wrong: no run directory, unreadable
            raise
        with opened:
            return build_report(run_dir, opened)
    try:
        held.open("run.json", hard_links_ok=True).close()
    except FileNotFoundError:
        pass  # read_record says so
    except OSError as e:  # a link, not a regular file: not read through
        raise RecordError(f"{run_dir / 'run.json'}: {e.strerror or e}: not read") from None
    run = measured(run_dir, read_record(run_dir))  # a crashed run: what it measured
    data = run_data(run_dir, run, held)
    label = status_label(run_dir, run)
    if label != run.status:
        data["run"]["status"], data["run"]["headline"] = label.split()[0], shout(label)
    name = data["run"]["scenario"]["name"] or run_dir.name
    return page(f"assay: {name} ({data['run']['status'] or 'unknown'})", data)


def write_report(run_dir: Path, out: Path | None = None) -> Path:
    """Render a stored run to `out` (default: report.html in the run directory)."""
    target = out or run_dir / "report.html"
    text = build_report(run_dir)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    except OSError:  # a full disk: no half-written file left behind
        tmp.unlink(missing_ok=True)
        raise
    return target

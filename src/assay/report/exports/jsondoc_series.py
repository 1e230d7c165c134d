"""JSON export: the `assay run --json` document plus every per-second series row."""

from __future__ import annotations

import json
from pathlib import Path

from assay.report.jsondoc import summary_document
from assay.results.blocklog import read_rows
from assay.results.record import RunRecord

SUFFIX = "json"


def render(run_dir: Path, record: RunRecord) -> str:
    doc = summary_document(record, run_dir)
    doc["series"] = list(read_rows(run_dir, "series"))
    return json.dumps(doc, indent=2) + "\n"

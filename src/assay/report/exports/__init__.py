"""Exports of a stored run, one module per format, registered here.

Each module defines SUFFIX (the file extension) and `render(run_dir, run) -> str`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

# format name -> module under assay.report.exports
EXPORTS = {
    "json": "jsondoc_series",
    "csv": "csvseries",
    "junit": "junit",
}


def render(fmt: str, run_dir: Path, run: dict[str, Any]) -> str:
    module = importlib.import_module(f"assay.report.exports.{EXPORTS[fmt]}")
    text: str = module.render(run_dir, run)
    return text


def suffix(fmt: str) -> str:
    suffix_: str = importlib.import_module(f"assay.report.exports.{EXPORTS[fmt]}").SUFFIX
    return suffix_

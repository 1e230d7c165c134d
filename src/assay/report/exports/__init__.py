"""Exports of a stored run, one module per format, registered here.

Each module is an `Exporter`: it defines SUFFIX (the file extension) and
`render(run_dir, record) -> str`. A new format is one module plus a `register` line here (and
a golden file in tests/fixtures/golden/); an installed package adds one with an entry point in
the group `assay.exporters` (docs/extending.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from assay.plugins import Registry
from assay.report.exports import csvseries, jsondoc_series, junit, openmetrics
from assay.results.record import RunRecord


class Exporter(Protocol):
    SUFFIX: str

    def render(self, run_dir: Path, record: RunRecord) -> str: ...


def _problem(name: str, obj: object) -> str | None:
    if not isinstance(getattr(obj, "SUFFIX", None), str):
        return "has no SUFFIX string (the file extension)"
    if not callable(getattr(obj, "render", None)):
        return "has no render(run_dir, record) function"
    return None


REGISTRY: Registry[Exporter] = Registry("exporter", "assay.exporters", _problem)


def register(name: str, exporter: Exporter) -> None:
    """Add a format (mypy checks the module against the protocol)."""
    REGISTRY.register(name, exporter)


register("json", jsondoc_series)
register("csv", csvseries)
register("junit", junit)
register("openmetrics", openmetrics)


def names() -> list[str]:
    return REGISTRY.names()


def render(fmt: str, run_dir: Path, record: RunRecord) -> str:
    return REGISTRY.get(fmt).render(run_dir, record)


def suffix(fmt: str) -> str:
    return REGISTRY.get(fmt).SUFFIX

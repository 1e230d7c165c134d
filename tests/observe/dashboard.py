"""docs/grafana/assay.json and its PromQL queries, for the dashboard tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DASHBOARD = Path(__file__).parents[2] / "docs" / "grafana" / "assay.json"


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def dashboard_exprs(data: dict[str, Any] | None = None) -> list[str]:
    """Every panel query and annotation query."""
    data = data or load()
    exprs = [t["expr"] for p in data["panels"] for t in p.get("targets", [])]
    exprs += [a["expr"] for a in data["annotations"]["list"] if "expr" in a]
    return exprs

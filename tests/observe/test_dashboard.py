"""docs/grafana/assay.json against Grafana's dashboard schema, as Grafana's own Foundation SDK
(PyPI `grafana-foundation-sdk`, models generated from Grafana's schema) reads it: every key
must survive its decode and encode, so a key the schema does not know is caught. Its
queries name only series the exporter writes (their data is checked in test_live_metrics)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from assay.metrics.families import catalogue
from tests.observe.dashboard import dashboard_exprs, load

# Prometheus' own annotation options: read by its data source, outside the dashboard schema
PROMETHEUS_ANNOTATION = {"titleFormat", "textFormat", "tagKeys", "step", "useValueForTime"}


def lost_keys(original: Any, back: Any, path: str = "") -> list[str]:
    """Paths of `original` that are missing from `back` (or changed)."""
    if isinstance(original, dict):
        if not isinstance(back, dict):
            return [path]
        out = []
        for k, v in original.items():
            out += lost_keys(v, back[k], f"{path}.{k}") if k in back else [f"{path}.{k}"]
        return out
    if isinstance(original, list):
        if not isinstance(back, list) or len(back) != len(original):
            return [path]
        return [p for i, (a, b) in enumerate(zip(original, back, strict=True))
                for p in lost_keys(a, b, f"{path}[{i}]")]
    return [] if original == back else [f"{path}: {original!r} -> {back!r}"]


def schema_problems(data: dict[str, Any]) -> list[str]:
    sdk = pytest.importorskip("grafana_foundation_sdk", reason="pip package "
                              "grafana-foundation-sdk missing (pip install -e '.[dev]')")
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.cog.plugins import register_default_plugins
    from grafana_foundation_sdk.models.dashboard import Dashboard

    assert sdk
    register_default_plugins()  # panel options and Prometheus queries by their own schemas
    back = json.loads(json.dumps(Dashboard.from_json(data), cls=JSONEncoder))
    return [p for p in lost_keys(data, back)
            if not re.fullmatch(r"\.annotations\.list\[\d+\]\.(\w+)", p)
            or p.rsplit(".", 1)[1] not in PROMETHEUS_ANNOTATION]


def test_dashboard_keys_are_all_in_grafanas_schema() -> None:
    data = load()
    assert schema_problems(data) == []
    # the check itself catches a key Grafana does not know, wherever it is
    for where in ("options", "targets", "fieldConfig"):
        bad = copy.deepcopy(data)
        part = bad["panels"][2][where]
        (part[0] if isinstance(part, list) else part)["legendz"] = 1
        assert schema_problems(bad), where


def test_dashboard_shows_what_the_issue_asks_for() -> None:
    data = load()
    by_title = {p["title"]: p for p in data["panels"]}
    exprs = " ".join(dashboard_exprs(data))
    for metric in ("assay_achieved_iops", "assay_target_iops", 'quantile="0.99"',
                   "assay_due_latency_p99_seconds", "assay_threshold_passing",
                   "assay_host_cpu_ratio", "assay_timeline_steps_total"):
        assert metric in exprs, metric
    iops = by_title["IO/s against target"]
    assert [t["expr"].split("{")[0] for t in iops["targets"]] == ["assay_achieved_iops",
                                                                  "assay_target_iops"]
    names = {a["name"] for a in data["annotations"]["list"]}
    assert {"Timeline steps", "Hosts lost"} <= names
    assert {v["name"] for v in data["templating"]["list"]} == {"datasource", "run_id",
                                                                "component"}


def test_queries_name_only_series_the_exporter_writes() -> None:
    known = set()
    for f in catalogue().values():
        base = f.name
        known |= {base, f"{base}_total", f"{base}_info", f"{base}_sum", f"{base}_count"}
    labels = {"run_id", "scenario", "workload", "component", "host", "quantile", "phase",
              "mode", "nic", "direction", "threshold", "action", "outcome"}
    for expr in dashboard_exprs():
        for name in re.findall(r"\b(assay_[a-z0-9_]+)", expr):
            assert name in known, (name, expr)
        for label in re.findall(r"([a-z_]+)\s*=~?\s*\"", expr):
            assert label in labels, (label, expr)
        for label in re.findall(r"by \(([^)]*)\)", expr):
            assert set(x.strip() for x in label.split(",")) <= labels, expr

"""What differed between runs: every configuration and environment fact as a key path.

run.json `target`, `environment` and `plan` and the rendered fio job files are flattened into
`section.key.sub = value` rows; a row is listed when its value is not the same in every run.
The seed "truth about storage benchmarking" found most of a result's variance in configuration,
so a comparison must say what else changed besides the platform under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.results import safeopen
from assay.results.record import RunRecord

# changes every run and says nothing about the platform or the workload
VOLATILE = {"target.free_bytes", "target.removed", "target.blkio_limits.read_iops",
            "target.blkio_limits.write_iops", "target.blkio_limits.read_bps",
            "target.blkio_limits.write_bps"}


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """{"a": {"b": [1, 2]}} -> {"a.b[0]": "1", "a.b[1]": "2"}; scalars as display text."""
    out: dict[str, str] = {}
    if isinstance(value, dict):
        if not value and prefix:
            out[prefix] = "{}"
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(value, list):
        if not value and prefix:
            out[prefix] = "[]"
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = "-" if value is None else (
            value if isinstance(value, str) else json.dumps(value))
    return out


def parse_jobfile(text: str, target_path: str | None = None) -> dict[str, str]:
    """fio job file -> {"section.option": value}; the run's own directory shown as <target>."""
    out: dict[str, str] = {}
    section = "global"
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, _, val = line.partition("=")
        val = val.strip()
        if target_path and val.startswith(target_path):
            val = "<target>" + val[len(target_path):]
        out[f"{section}.{key.strip()}"] = val if _ else "(set)"
    return out


def facts(run: RunRecord, run_dir: Path | None = None) -> dict[str, str]:
    """All the facts of one run that may explain a difference in results."""
    # as stored: a fact an older record lacks stays absent, not a default that never ran
    out = flatten({"target": run.target.stored(), "environment": run.environment.stored(),
                   "plan": run.plan.stored()})
    for c, info in run.components.items():
        out[f"components.{c}.target_iops"] = flatten(info.target_iops, "x")["x"]
    cluster = (run.model_extra or {}).get("cluster")
    if isinstance(cluster, dict):  # each host's fingerprint (its clock offset is no fact)
        out.update(flatten({"hosts": {
            h: {k: v for k, v in f.items() if k not in ("clock_offset_ms", "rtt_ms")}
            for h, f in (cluster.get("hosts") or {}).items() if isinstance(f, dict)}}))
    if run_dir is not None:
        target_path = run.target.path
        # each host's job file, opened inside the run directory (never through a link)
        try:
            with safeopen.Inside(run_dir) as held:
                jobs = dict(held.files("hosts", "run.fio"))
        except OSError:
            jobs = {}
        for host, text in jobs.items():
            for k, v in parse_jobfile(text, target_path).items():
                out[f"fio.{host}.{k}"] = v
    return {k: v for k, v in out.items() if k not in VOLATILE}


def differences(all_facts: list[dict[str, str]]) -> list[tuple[str, list[str]]]:
    """(key, [value per run]) for every key whose value is not the same everywhere."""
    keys: list[str] = []
    seen: set[str] = set()
    for f in all_facts:
        for k in f:
            if k not in seen:
                seen.add(k)
                keys.append(k)
    rows = []
    for k in keys:
        values = [f.get(k, "(absent)") for f in all_facts]
        if len(set(values)) > 1:
            rows.append((k, values))
    return rows

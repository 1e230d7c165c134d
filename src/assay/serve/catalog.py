"""The runs and search/sweep records a results directory holds, with the browser's filters.

Rows come from the catalogue (results/catalogue.py, which keeps itself in step with the run
directories); host, description and the scenario's fields are read from each run.json, so a
filter such as `compression` matches any fact of the run (`plan.workloads.db.data.
compressibility`) by the last parts of its key.

A damaged run.json (results/record.py) is listed as `unreadable` with the reason and read no
further; the counts, times and names listed come from the catalogue's checked row.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.report.diff import flatten
from assay.results.catalogue import Catalogue
from assay.results.liveness import effective_status
from assay.results.record import RecordError
from assay.results.rundir import read_document

FILTERS = ("scenario", "platform", "status", "host", "since", "until", "field", "value")
RECORD_KINDS = {"search": "searches", "sweep": "sweeps"}


@dataclass
class Filters:
    scenario: str = ""
    platform: str = ""
    status: str = ""
    host: str = ""
    since: str = ""  # YYYY-MM-DD, local time, inclusive
    until: str = ""
    field: str = ""  # the end of a fact's key, e.g. `compressibility`
    value: str = ""

    @classmethod
    def from_query(cls, query: dict[str, list[str]]) -> Filters:
        return cls(**{k: (query.get(k) or [""])[0].strip()[:200] for k in FILTERS})

    def as_dict(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in FILTERS}


def read_json(path: Path) -> dict[str, Any]:
    """A stored JSON object, or {} when it is missing, unreadable or damaged."""
    try:
        return read_document(path)
    except (OSError, RecordError):
        return {}


def _mapping(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _day(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def _local_day(started: float | None) -> dt.date | None:
    try:
        return dt.datetime.fromtimestamp(started).date() if started else None
    except (OverflowError, ValueError, OSError):
        return None


def _summary(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def fact_matches(facts: dict[str, str], field: str, value: str) -> bool:
    """A fact whose key is `field` or ends with `.field`, equal to `value` (as text or as a
    number: `2` matches `2.0`); an empty value asks only that the fact exists."""
    for key, text in facts.items():
        if key != field and not key.endswith("." + field):
            continue
        if not value or text == value or text.strip('"') == value:
            return True
        try:
            if float(text) == float(value):
                return True
        except ValueError:
            continue
    return False


def run_facts(record: dict[str, Any]) -> dict[str, str]:
    return flatten({k: record.get(k) or {} for k in ("target", "environment", "plan")})


def hosts_of(record: dict[str, Any]) -> list[str]:
    """The machines a run ran on: each cluster host, else the one that ran it."""
    cluster = record.get("cluster")
    if isinstance(cluster, dict) and isinstance(cluster.get("hosts"), dict):
        return sorted(str(h) for h in cluster["hosts"])
    env = record.get("environment")
    name = env.get("hostname") if isinstance(env, dict) else None
    return [str(name)] if name else []


def runs(root: Path, f: Filters) \
        -> tuple[list[dict[str, Any]], dict[str, list[str]], str | None]:
    """(matching runs newest first, the values each choice filter can take, and why the
    catalogue could not be used, if so)."""
    index = Catalogue(root)
    rows = index.rows()
    out: list[dict[str, Any]] = []
    choices: dict[str, set[str]] = {"platform": set(), "status": set(), "host": set()}
    since, until = _day(f.since), _day(f.until)
    for r in rows:
        path = Path(r["path"])
        record = {} if r["damaged"] else read_json(path / "run.json")
        status = effective_status(record, path) if record else str(r["status"])
        hosts = hosts_of(record)
        choices["platform"].add(str(r["platform"] or ""))
        choices["status"].add(status)
        choices["host"].update(hosts)
        started = r["started"]
        day = _local_day(started)
        scenario = _mapping(record.get("scenario"))
        if f.scenario and f.scenario.lower() not in str(r["scenario"]).lower():
            continue
        if (f.platform and f.platform != r["platform"]) or (f.status and f.status != status):
            continue
        if f.host and f.host not in hosts:
            continue
        if (since and (day is None or day < since)) or (until and (day is None or day > until)):
            continue
        if f.field and not fact_matches(run_facts(record), f.field, f.value):
            continue
        counts = _summary(r["summary"])  # checked as the catalogue lists it
        reason = f"damaged: {r['damaged']}" if r["damaged"] else str(record.get("reason") or "")
        out.append({"id": r["id"], "scenario": r["scenario"],
                    "description": str(scenario.get("description") or ""),
                    "started": started, "duration_s": r["duration_s"], "status": status,
                    "reason": reason, "platform": r["platform"],
                    "target": r["target"], "hosts": hosts, "parent": r["parent"],
                    "passed": counts.get("passed"), "failed": counts.get("failed")})
    out.sort(key=lambda x: x["started"] or 0, reverse=True)
    return out, {k: sorted(v - {""}) for k, v in choices.items()}, index.notice


def records(root: Path) -> list[dict[str, Any]]:
    """Every search and sweep record, newest first."""
    out = []
    for kind, folder in RECORD_KINDS.items():
        base = root / folder
        for path in sorted(base.iterdir()) if base.is_dir() else []:
            rec = read_json(path / f"{kind}.json")
            if not rec:
                continue
            trials = rec.get("trials")
            out.append({"kind": kind, "id": path.name, "scenario": str(rec.get("scenario") or ""),
                        "status": str(rec.get("status") or ""), "created": rec.get("created"),
                        "trials": len(trials) if isinstance(trials, list) else 0})
    out.sort(key=lambda x: x["created"] if isinstance(x["created"], int | float) else 0,
             reverse=True)
    return out


def record(root: Path, kind: str, name: str) -> dict[str, Any] | None:
    """One search or sweep record by its directory name (nothing else is opened)."""
    base = root / RECORD_KINDS[kind] if kind in RECORD_KINDS else None
    if base is None or not base.is_dir() or name not in {p.name for p in base.iterdir()}:
        return None
    rec = read_json(base / name / f"{kind}.json")
    return rec or None

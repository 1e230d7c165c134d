"""Thresholds on the platform's own state (`platform.*`), graded from its series.

    platform.recovery_s < 5m       the longest stretch from the first PG not active+clean to
                                   every PG active+clean again (not clean at the end: until then,
                                   and it fails)
    platform.io_frozen_s < 30s     the longest run of seconds in which the load completed no IO
                                   at all, on every host together (from fio's own series)
    platform.health_err_s == 0     seconds the platform reported HEALTH_ERR

They are written like the others (`platform.recovery_s: "< 5m"` or the list form), need a
platform that reports its state (Ceph: platforms/cephstate.py) and are graded with the run's
cluster thresholds (run.json `cluster.thresholds`).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from assay.platforms import cephstate
from assay.results.blocklog import read_rows
from assay.scenario.units import UnitError, parse_duration

METRICS = {"recovery_s": "recovery to active+clean", "io_frozen_s": "longest IO freeze",
           "health_err_s": "time in HEALTH_ERR"}
OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq, ">=": operator.ge, ">": operator.gt}
EXPR = re.compile(r"^(?:platform\.(?P<m>\w+)\s*)?(?P<op><=|>=|==|<|>)\s*(?P<v>\S+)$")


def entries(spec: dict[str, str] | list[Any]) -> list[tuple[str, str, float]]:
    """The `platform.` thresholds of a scenario: (metric, op, bound in seconds); ValueError
    naming the entry for a bad one."""
    items: list[tuple[str, str]] = []
    if isinstance(spec, dict):
        items = [(k, str(v)) for k, v in spec.items() if k.startswith("platform.")]
    else:
        items = [("", e) for e in spec if isinstance(e, str) and
                 e.lstrip().startswith("platform.")]
    out = []
    for key, value in items:
        text = f"{key} {value}".strip()
        m = EXPR.match(value.strip() if key else text)
        metric = key.removeprefix("platform.") if key else (m.group("m") if m else "")
        if not m or metric not in METRICS:
            raise ValueError(f"{text!r}: write platform.METRIC < VALUE, METRIC one of "
                             f"{', '.join(METRICS)}")
        try:
            bound = parse_duration(m.group("v"))
        except UnitError as e:
            raise ValueError(f"{text!r}: {e}") from None
        out.append((metric, m.group("op"), bound))
    return out


def is_platform(key: str | int, value: Any) -> bool:
    return (isinstance(key, str) and key.startswith("platform.")) or (
        isinstance(value, str) and value.lstrip().startswith("platform."))


def recovery_s(rows: list[dict[str, Any]]) -> tuple[float | None, str]:
    """The longest unclean stretch, and a note (not clean at the end)."""
    states = [(r["t"], r.get("clean")) for r in rows if "clean" in r]
    if not states:
        return None, "no platform state measured"
    worst, since = 0.0, None
    for t, clean in states:
        if not clean and since is None:
            since = t
        elif clean and since is not None:
            worst, since = max(worst, t - since), None
    if since is not None:
        return round(max(worst, states[-1][0] - since), 1), "not active+clean at the end"
    return round(worst, 1), ""


def health_err_s(rows: list[dict[str, Any]]) -> tuple[float | None, str]:
    if not rows:
        return None, "no platform state measured"
    return float(sum(1 for r in rows if r.get("health") == "HEALTH_ERR")), ""


def io_frozen_s(series: Iterable[dict[str, Any]]) -> tuple[float | None, str]:
    """Longest stretch in which the load completed no IO, on every host together, between its
    first and last IO (fio's per-second series, merged). fio cannot report while all its IO is
    stuck, so a second that came late counts too: a row of `dt` seconds counts as frozen for
    dt - 1 s, but never longer than its slowest IO waited (lat_max)."""
    per_s: dict[float, list[float]] = {}
    for r in series:
        t = round(float(r["t"]), 3)
        ios, dt, lat = per_s.setdefault(t, [0, 0.0, 0.0])
        per_s[t] = [ios + int(r.get("ios") or 0), max(dt, float(r.get("dt") or 0)),
                    max(lat, float(r.get("lat_max_ms") or 0) / 1000)]
    seconds = [v for _, v in sorted(per_s.items())]
    busy = [i for i, (ios, _, _) in enumerate(seconds) if ios]
    if not busy:
        return None, "no IO measured"
    worst = run = 0.0
    for ios, dt, lat in seconds[busy[0]:busy[-1] + 1]:
        if ios == 0:
            run += dt
        else:
            late = min(dt - 1.0, lat) if dt > 1.5 else 0.0
            run = run + late if late > 0 else 0.0
        worst = max(worst, run)
        if ios and dt <= 1.5:
            run = 0.0
    return round(worst, 1), ""


def grade(spec: dict[str, str] | list[Any], run_dir: Path) -> list[dict[str, Any]]:
    """Each `platform.` threshold as run.json's cluster thresholds record them."""
    try:
        wanted = entries(spec)
    except ValueError:
        return []  # refused when the scenario was planned
    if not wanted:
        return []
    rows = cephstate.read(run_dir)
    measure = {"recovery_s": lambda: recovery_s(rows), "health_err_s": lambda: health_err_s(rows),
               "io_frozen_s": lambda: io_frozen_s(read_rows(run_dir, "series"))}
    out = []
    for metric, op, bound in wanted:
        observed, note = measure[metric]()
        passed = observed is not None and OPS[op](observed, bound) and not note
        out.append({"expr": f"platform.{metric} {op} {bound:g}s", "component": "platform",
                    "unit": "s", "metric": metric, "observed": observed, "bound": bound,
                    "passed": passed, "note": note or METRICS[metric]})
    return out

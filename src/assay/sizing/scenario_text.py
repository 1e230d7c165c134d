"""The text of an emitted scenario. Written by hand so it can carry comments that teach; every
value goes through `scalar`, so the result is always valid YAML (the tests load it back)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

from assay.exitcodes import UserError
from assay.sizing.explain import GIB, MIB, Result, fmt
from assay.sizing.units import format_size

QUICK_CHECK_DATASET = 64 * GIB
TARGET_LINES = (
    "target: {platform: local}   # add `path:` (a directory on the platform under test); "
    "without it assay uses a temporary directory on this host",
)


def scalar(v: object) -> str:
    """A YAML scalar: numbers as they are, strings double-quoted (JSON strings are YAML)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    return json.dumps(str(v), ensure_ascii=False)


def size_value(n: float) -> str:
    """A size as whole bytes with its reading beside it: unambiguous whatever a scenario's
    unit letters mean (`16000000000000   # 16.00 TB (14.55 TiB)`)."""
    return f"{math.ceil(n - 1e-6)}   # {format_size(n)}"


def fio_size(n: float) -> str:
    """A size in fio's binary units, rounded up so the dataset is never smaller than sized."""
    if n >= GIB:
        return f"{math.ceil(n / GIB - 1e-9)}GiB"
    return f"{max(1, math.ceil(n / MIB - 1e-9))}MiB"


def scenario_name(kind: str, failures: int) -> str:
    name = f"{kind}-n-{failures}-validation" if failures else f"{kind}-validation"
    assert re.fullmatch(r"[A-Za-z0-9_-]+", name)
    return name


def document(name: str, description: str, workloads: Iterable[str], timeline: str,
             thresholds: Iterable[str], header: Iterable[str]) -> str:
    lines = [f"# {h}" for h in header]
    lines += [f"name: {name}", f"description: {scalar(description)}", *TARGET_LINES,
              "workloads:", *workloads, f"timeline: {timeline}", "thresholds:", *thresholds]
    return "\n".join(lines) + "\n"


def header(result: Result, keys: Iterable[str]) -> list[str]:
    """The figures the scenario validates, and whether the design's rules hold."""
    head = ["Written by `assay size` - the design this scenario validates:"]
    for key in keys:
        f = result.figures.get(key)
        if f:
            head.append(f"  {f.label}: {fmt(f.value, f.unit, f.binary)}")
    failed = result.failed
    if result.checks:
        head.append("  design rules: " + ("all hold" if not failed else
                                          "FAILING: " + "; ".join(c.rule for c in failed)))
    head.append("Run it with: assay run <this file>")
    return head


def write(path: str, text: str) -> Path:
    p = Path(path)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot write the scenario to {path}: {e.strerror}") from None
    return p

"""Fixed rates that hold back the whole run, warned about when it is planned.

fio's periodic status dumps (`--status-interval`, assay's seconds) wait for every job's usage
update, which a job makes only when it issues an IO: a job paced under 1 IO/s makes every dump
of the run come that many seconds apart. The seconds get coarse and a short run can end
incomplete. fio paces each job on its own (each clone of `numjobs` at the full rate).

fio also reads `rate_iops` as a whole number: 0.25 is 0, no cap at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.metrics.pacedjobs import fio_size
from assay.workloads.base import Stream

SLOW_IOPS = 1.0
DIRECTIONS = ("read", "write", "trim")  # the order of fio's comma-separated values


def warnings(streams: list[Stream]) -> list[str]:
    """One warning per workload with a job under 1 IO/s, one per fractional rate_iops."""
    out: list[str] = []
    by_workload: dict[str, list[tuple[str, float, int]]] = {}
    for s in streams:
        for job in s.jobs:
            if fraction := fractional_iops(job.options):
                out.append(f"workload {s.workload}: fio job {job.name} asks rate_iops="
                           f"{fraction}, and fio counts whole IOs: it reads 0, no cap, and the "
                           f"job runs as fast as the storage goes; give `rate` in bytes/s "
                           f"(block size x IO/s) for a fractional rate, or a whole rate_iops")
                continue
            rate = io_rate(job.options)
            if rate is not None and rate < SLOW_IOPS:
                clones = int(job.options.get("numjobs") or 1)
                by_workload.setdefault(s.workload, []).append((job.name, rate, clones))
    for workload, jobs in by_workload.items():
        out.append(slow_warning(workload, jobs))
    return out


def slow_warning(workload: str, jobs: list[tuple[str, float, int]]) -> str:
    name, rate, clones = min(jobs, key=lambda j: j[1])
    others = f" (and {len(jobs) - 1} more of its jobs under 1 IO/s)" if len(jobs) > 1 else ""
    each = f", each of its {clones} clones," if clones > 1 else ""
    return (f"workload {workload}: fio job {name}{each} is paced at {rate:.2g} IO/s, one IO "
            f"every {1 / rate:.1f}s{others}; fio's status dumps wait for every job's next IO, "
            f"so the whole run's seconds come that far apart (coarse figures, and a short run "
            f"can end incomplete): raise the rate (or load.scale), spread it over fewer jobs "
            f"(fewer files or instances), or run longer")


def io_rate(options: Mapping[str, Any]) -> float | None:
    """The most IO/s a job's fixed rate lets it issue (its directions' added), or None when
    a direction it does IO in is not capped (or a value is not one fio takes)."""
    total = 0.0
    try:
        for d in directions(options):
            iops = _amount(per_direction(options.get("rate_iops"), d))
            if int(iops) > 0:  # fio's whole IOs: rate_iops wins over rate
                total += int(iops)
                continue
            rate = _amount(per_direction(options.get("rate"), d))
            if rate <= 0:
                return None
            total += rate / mean_block(options, d)
    except (ValueError, ZeroDivisionError):
        return None
    return total


def fractional_iops(options: Mapping[str, Any]) -> str:
    """A rate_iops under 1 (but not 0) that a direction of the job uses, as written."""
    for d in directions(options):
        text = per_direction(options.get("rate_iops"), d)
        try:
            if 0 < _amount(text) < 1:
                return text
        except ValueError:
            return ""
    return ""


def directions(options: Mapping[str, Any]) -> list[int]:
    """The directions a job does IO in, as indexes into fio's comma-separated values."""
    rw = str(options.get("rw") or options.get("readwrite") or "read").split(":")[0]
    if rw in ("rw", "readwrite", "randrw"):
        return [0, 1]
    if "trim" in rw:
        return [1, 2] if "write" in rw else [2]  # trimwrite: a trim, then a write
    return [1] if "write" in rw else [0]


def per_direction(value: object, d: int) -> str:
    """fio's `read,write,trim` values: one applies to all, the last one given to those after
    it (`8k,32k` is 32k for trims), an empty one is the default (`500k,` caps reads only)."""
    parts = str(value if value is not None else "").split(",")
    return parts[d] if d < len(parts) else parts[-1]


def mean_block(options: Mapping[str, Any], d: int) -> float:
    split = per_direction(options.get("bssplit") or "", d)
    if split:
        return _split_mean(split)
    span = per_direction(options.get("bsrange") or options.get("blocksize_range") or "", d)
    if "-" in span:
        low, high = span.split("-", 1)
        return (fio_size(low) + fio_size(high)) / 2
    return float(fio_size(per_direction(options.get("bs") or options.get("blocksize"), d)
                          or "4k"))


def _split_mean(split: str) -> float:
    """`4k/50:64k/` -> the mean block; sizes without a share split what the others leave."""
    entries = [(fio_size(size), float(pct) if pct else None)
               for size, _, pct in (e.partition("/") for e in split.split(":") if e)]
    given = sum(p for _, p in entries if p is not None)
    open_ = [s for s, p in entries if p is None]
    rest = max(0.0, 100 - given) / len(open_) if open_ else 0.0
    weights = [(s, rest if p is None else p) for s, p in entries]
    return sum(s * p for s, p in weights) / sum(p for _, p in weights)


def _amount(text: str) -> float:
    """A rate as fio reads it: `0` when empty, binary k/m/g suffixes."""
    text = text.strip().lower().rstrip("ib")
    if not text:
        return 0.0
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    return float(text[:-1] if scale > 1 else text) * scale

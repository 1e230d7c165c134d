"""Rates fio cannot hold, refused in planning with the scenario's own field.

fio keeps `rate_iops` in an unsigned 32-bit integer: a larger rate wraps around silently to
another rate (a false result), so a workload whose rate (its own keys times `load.scale`)
asks one fio job for more is refused before fio is asked.
"""

from __future__ import annotations

from pydantic import BaseModel

from assay.scenario.models import ResolvedScenario
from assay.scenario.yamlsource import Issue, Path_
from assay.workloads.base import Stream

MAX_RATE_IOPS = (1 << 32) - 1  # fio's unsigned int rate_iops
MAX_RATE_BYTES = (1 << 63) - 1  # fio's 64-bit rate (bytes/s)
NOT_RATES = ("dataset", "start", "stop", "stagger", "iodepth", "threads", "count_per_host")


def check(resolved: ResolvedScenario, streams: list[Stream]) -> list[Issue]:
    issues: list[Issue] = []
    for name, params in resolved.workloads.items():
        for stream in (s for s in streams if s.workload == name):
            over = [(job.name, rate, limit, unit) for job in stream.jobs
                    for key, limit, unit in (("rate_iops", MAX_RATE_IOPS, "IO/s"),
                                             ("rate", MAX_RATE_BYTES, "bytes/s"))
                    if isinstance(rate := job.options.get(key), int | float) and rate > limit]
            if over:
                job, rate, limit, unit = over[0]
                issues.append(resolved.source.issue(
                    ("workloads", name, *largest_number(params)),
                    f"this rate asks fio job {job} for {rate:.3g} {unit}; fio paces at most "
                    f"{limit} {unit} per job: lower the rate or `load.scale`"))
                break
    return issues


def largest_number(model: BaseModel) -> Path_:
    """The key a user set that holds the largest number: the rate that was too much."""
    return max(_numbers(model, ()), default=(0.0, ()), key=lambda n: n[0])[1]


def _numbers(model: BaseModel, path: Path_) -> list[tuple[float, Path_]]:
    out: list[tuple[float, Path_]] = []
    for key in sorted(model.model_fields_set):
        value = getattr(model, key)
        if isinstance(value, BaseModel):
            out.extend(_numbers(value, (*path, key)))
        elif isinstance(value, int | float) and not isinstance(value, bool) \
                and key not in NOT_RATES:
            out.append((float(value), (*path, key)))
    return out

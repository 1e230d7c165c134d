"""Integrity mode checked before any IO: only writing workloads verify, `verify` steps and
`integrity.*` thresholds need a workload in integrity mode, and the blocks need a filesystem
(on a raw device every byte belongs to fio's layout)."""

from __future__ import annotations

from assay.integrity.fiojobs import headed_files
from assay.integrity.session import settings
from assay.scenario.models import ResolvedScenario
from assay.scenario.yamlsource import Issue
from assay.thresholds.grammar import Threshold
from assay.workloads.base import Stream


def writing(streams: list[Stream]) -> set[str]:
    """The workloads that write at all."""
    return {s.workload for s in streams for c in s.components if c.component.endswith(".write")}


def check(resolved: ResolvedScenario, streams: list[Stream],
          thresholds: list[Threshold], cluster: bool = False) -> list[Issue]:
    src = resolved.source
    writes = writing(streams)
    _, chosen = settings(resolved, writes)
    issues = [src.issue(("workloads", n, "verify"), "this workload does not write: there is "
                        "nothing to verify")
              for n, w in resolved.workloads.items() if w.verify and n not in writes]
    if resolved.scenario.integrity is not None and not writes:
        issues.append(src.issue(("integrity",), "no workload writes: there is nothing to verify"))
    if chosen and resolved.scenario.target.device:
        issues.append(src.issue(("integrity",) if resolved.scenario.integrity is not None
                                else ("workloads", chosen[0], "verify"),
                                "integrity mode needs a filesystem target: on a raw device "
                                "every byte belongs to the workloads' layout"))
    need = "needs integrity mode (`integrity: on`, or `verify: true` on a writing workload)"
    if not chosen:
        for i, step in enumerate(resolved.steps):
            if step.action == "verify":
                issues.append(src.issue(("timeline", "steps", i, "action"), f"`verify` {need}"))
        for t in thresholds:
            if t.integrity:
                issues.append(src.issue(("thresholds",), f"{t.text!r} {need}"))
    for t in thresholds:
        if t.integrity and len(t.selector) > 1 and chosen and t.selector[1] not in chosen:
            issues.append(src.issue(("thresholds",), f"{t.text!r}: workload {t.selector[1]!r} "
                                    f"is not in integrity mode (verified: {', '.join(chosen)})"))
    return issues


def describe(resolved: ResolvedScenario, streams: list[Stream], hosts: bool = False) -> str:
    """One line for `assay plan`: what integrity mode will write, or that it is off; `hosts`:
    a cluster run, where each host's agent writes and verifies its own blocks."""
    spec, chosen = settings(resolved, writing(streams))
    if not chosen:
        return "off"
    headed = headed_files(streams)
    if hosts:
        return (f"{', '.join(chosen)}: on each host it is placed on, {spec.size >> 20} MiB of "
                f"{spec.block >> 10} KiB self-checking blocks at {spec.rate:g} writes/s, "
                f"written and verified there by assay's agent, journaled on the host and "
                f"brought back at the end; "
                + ("verified on every host at the end" if spec.final else "no final pass"))
    return (f"{', '.join(chosen)}: {spec.size >> 20} MiB of {spec.block >> 10} KiB self-checking "
            f"blocks each at {spec.rate:g} writes/s, journaled in the run directory; "
            + (f"{len(headed)} data files written with fio's crc32c verify headers, "
               f"checksummed by every pass; " if headed else "")
            + ("verified at the end" if spec.final else "no final pass"))

"""Database workloads and their steps, checked at plan time (file:line, before any IO)."""

from __future__ import annotations

from assay.scenario.models import ResolvedScenario
from assay.scenario.yamlsource import Issue


def check(resolved: ResolvedScenario) -> list[Issue]:
    src = resolved.source
    names = [n for n, w in resolved.workloads.items() if w.kind == "postgres"]
    issues: list[Issue] = []
    if names and resolved.scenario.target.device:
        issues.append(src.issue(("target", "device"), "a postgres workload needs a filesystem: "
                                "give `target.path` (a mounted filesystem), not a raw device"))
    raw = [i for i, r in enumerate(resolved.scenario.timeline.steps or []) if isinstance(r, dict)]
    for i, step in zip(raw, resolved.steps, strict=False):
        if step.action != "pg_backup":
            continue
        wanted = getattr(step, "workload", None)
        if wanted is not None and wanted not in names:
            issues.append(src.issue(("timeline", "steps", i, "workload"),
                                    f"{wanted!r} is not a postgres workload (postgres "
                                    f"workloads: {', '.join(names) or 'none'})"))
        elif wanted is None and len(names) != 1:
            issues.append(src.issue(("timeline", "steps", i), f"pg_backup backs up a postgres "
                                    f"workload: the scenario has {len(names)}; name one with "
                                    f"`workload:`" if names else "pg_backup backs up a postgres "
                                    "workload, and the scenario has none"))
    return issues

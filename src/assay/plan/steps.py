"""Timeline steps checked before any IO: names, `after` links, what the platform can do, and
the thresholds that grade phases."""

from __future__ import annotations

from assay import actions as action_registry
from assay.platforms import driver
from assay.platforms import names as platform_names
from assay.scenario.models import ResolvedScenario, step_names
from assay.scenario.units import format_duration
from assay.scenario.yamlsource import Issue
from assay.thresholds.grammar import Threshold


def check_steps(resolved: ResolvedScenario, thresholds: list[Threshold], duration: float,
                notes: list[str] | None = None) -> list[Issue]:
    """Timeline steps against each other, the platform driver and the phase thresholds. A
    step that could never start is refused: a run would pass without doing it."""
    src = resolved.source
    target = resolved.scenario.target
    issues: list[Issue] = []
    steps = resolved.steps
    names = step_names(steps)
    try:
        drv = driver(target.platform)
    except KeyError:
        issues.append(src.issue(("target", "platform"), f"unknown platform "
                                f"{target.platform!r} (known: {', '.join(platform_names())})"))
        return issues
    supported = drv.supports(target)
    raw = [i for i, r in enumerate(resolved.scenario.timeline.steps or [])
           if isinstance(r, dict)]
    for i, (step, name) in zip(raw, zip(steps, names, strict=True), strict=False):
        path = ("timeline", "steps", i)
        if names.count(name) > 1:
            issues.append(src.issue((*path, "name"), f"two steps are named {name!r}"))
        if step.after is not None and step.after not in names:
            issues.append(src.issue((*path, "after"), f"no step is named {step.after!r} "
                                    f"(steps: {', '.join(names)})"))
        elif step.after == name:
            issues.append(src.issue((*path, "after"), "a step cannot wait for itself"))
        missing = sorted(action_registry.requirements(step) - supported)
        if missing:
            can = ", ".join(sorted(supported)) or "no platform operations"
            issues.append(src.issue((*path, "action"), f"platform {target.platform!r} cannot "
                                    f"do {', '.join(missing)} (it supports: {can})"))
        if step.after is None and (step.at or 0) >= duration:
            issues.append(src.issue((*path, "at"), f"step {name!r} is at "
                                    f"{format_duration(step.at or 0)}, at or after the end of "
                                    f"the {format_duration(duration)} measured: it would "
                                    f"never start"))
    issues.extend(_never_start(resolved, names, raw, duration))
    issues.extend(_end_rule(resolved, names))
    labels = set(names) | {s.action for s in steps}
    for t in thresholds:
        if (t.phase or t.metric == "recovery") and not steps:
            issues.append(src.issue(("thresholds",), f"{t.text!r}: phases and recovery need "
                                    f"timeline steps, and this scenario has none"))
        elif t.phase_step and t.phase_step not in labels:
            issues.append(src.issue(("thresholds",), f"{t.text!r}: no step or action is "
                                    f"named {t.phase_step!r} (steps: {', '.join(names)})"))
    return issues


def _end_rule(resolved: ResolvedScenario, names: list[str]) -> list[Issue]:
    """`timeline.end: after STEP`: a step of this timeline that ends a known number of times
    (a step repeated until the load ends would never let it end early)."""
    rule = resolved.scenario.timeline.end_rule
    if rule is None:
        return []
    path = ("timeline", "end")
    if rule.step not in names:
        return [resolved.source.issue(path, f"no step is named {rule.step!r} (steps: "
                                            f"{', '.join(names) or 'none'})")]
    step = resolved.steps[names.index(rule.step)]
    if step.every is not None and step.count is None:
        return [resolved.source.issue(path, f"step {rule.step!r} repeats every "
                                            f"{format_duration(step.every)} until the load "
                                            f"ends: give it a `count`, or end after another "
                                            f"step")]
    return []


def _never_start(resolved: ResolvedScenario, names: list[str], raw: list[int],
                 duration: float) -> list[Issue]:
    """Steps whose `after` links run in a circle (a waits for b, b for a), or lead to a step
    that is past the end of the run: none of them can ever start."""
    steps = dict(zip(names, resolved.steps, strict=True))
    where = dict(zip(names, raw, strict=False))
    issues: list[Issue] = []
    for name, step in steps.items():
        if step.after is None or step.after == name or step.after not in steps:
            continue  # no link, or one already refused
        chain = [name]
        nxt: str | None = step.after
        while nxt is not None and nxt in steps and nxt not in chain:
            chain.append(nxt)
            nxt = steps[nxt].after
        path = ("timeline", "steps", where.get(name, 0), "after")
        if nxt is not None and nxt in chain:
            loop = chain[chain.index(nxt):] + [nxt]
            issues.append(resolved.source.issue(path, f"steps wait for each other in a circle "
                                                f"({' -> '.join(loop)}): none can ever "
                                                f"start"))
        elif (steps[chain[-1]].at or 0) >= duration and steps[chain[-1]].after is None:
            issues.append(resolved.source.issue(path, f"waits for {chain[-1]!r}, which is "
                                                f"past the end of the run: it would never "
                                                f"start"))
    return issues

"""Scenario file → validated models, with every problem reported at once as file:line: field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from assay.scenario.messages import in_words, is_type_tag, show
from assay.scenario.models import ResolvedScenario, Scenario, StepBase, WorkloadBase
from assay.scenario.yamlsource import (
    Issue,
    Path_,
    ScenarioInvalid,
    YamlSource,
    load_yaml,
)


def pydantic_issues(src: YamlSource, err: ValidationError, prefix: Path_ = ()) -> list[Issue]:
    """Turn pydantic errors into located issues in assay's words, one per place: a value that
    fits no branch of a union is said once, not once per branch."""
    out: dict[tuple[Path_, bool], Issue] = {}
    for e in err.errors():
        path = (*prefix, *(x for x in e["loc"] if not is_type_tag(x)))
        union = len(path) < len(prefix) + len(e["loc"])
        if (path, True) in out and union:
            continue
        out[(path, union)] = src.issue(path, in_words(e))
    return list(out.values())


def _validate(src: YamlSource, model: type[BaseModel], data: Any, prefix: Path_,
              issues: list[Issue]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        issues.extend(pydantic_issues(src, e, prefix))
        return None


def resolve(src: YamlSource, kinds: Mapping[str, type[WorkloadBase]],
            actions: Mapping[str, type[StepBase]], text: str = "") -> ResolvedScenario:
    """Validate the whole scenario against the known workload kinds and actions."""
    issues: list[Issue] = []
    if not isinstance(src.data, dict):
        raise ScenarioInvalid([src.issue((), "a scenario is a mapping of keys such as "
                                              "name, workloads, timeline")])
    scenario = _validate(src, Scenario, src.data, (), issues)
    workloads: dict[str, WorkloadBase] = {}
    raw_workloads = src.data.get("workloads")
    # not a mapping: the Scenario model has said so already
    for name, raw in (raw_workloads if isinstance(raw_workloads, dict) else {}).items():
        path: Path_ = ("workloads", name)
        if not isinstance(raw, dict):
            issues.append(src.issue(path, "a workload is a mapping with at least `kind`"))
            continue
        kind = raw.get("kind")
        if not isinstance(kind, str) or kind not in kinds:
            known = ", ".join(sorted(kinds))
            said = "required key is missing" if kind is None else \
                f"unknown workload kind {show(kind)}"
            issues.append(src.issue((*path, "kind"), f"{said} (known: {known})"))
            continue
        wl = _validate(src, kinds[kind], raw, path, issues)
        if wl is not None:
            workloads[name] = wl
    steps: list[StepBase] = []
    timeline = src.data.get("timeline") or {}
    raw_steps = timeline.get("steps") if isinstance(timeline, dict) else None
    for i, raw in enumerate(raw_steps if isinstance(raw_steps, list) else []):
        path = ("timeline", "steps", i)
        if not isinstance(raw, dict):
            issues.append(src.issue(path, "a step is a mapping with at least `action`"))
            continue
        action = raw.get("action")
        if not isinstance(action, str) or action not in actions:
            known = ", ".join(sorted(actions)) or "none"
            said = "required key is missing" if action is None else \
                f"unknown action {show(action)}"
            issues.append(src.issue((*path, "action"), f"{said} (known: {known})"))
            continue
        step = _validate(src, actions[action], raw, path, issues)
        if step is not None:
            steps.append(step)
    if issues or scenario is None:
        raise ScenarioInvalid(issues)
    return ResolvedScenario(scenario=scenario, workloads=workloads, steps=steps, source=src,
                            text=text)


def load_text(text: str, file: str, kinds: Mapping[str, type[WorkloadBase]],
              actions: Mapping[str, type[StepBase]]) -> ResolvedScenario:
    return resolve(load_yaml(text, file), kinds, actions, text)
